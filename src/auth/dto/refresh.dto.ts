import { IsString } from 'class-validator';

export class RefreshDto {
  /** The refresh token from register, login or social sign-in. */
  @IsString()
  refresh: string;
}
