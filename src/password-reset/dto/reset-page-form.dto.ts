import { IsOptional, IsString, MaxLength } from 'class-validator';

/** The reset page's form (urlencoded); the service judges the values, the page shows its answer. */
export class ResetPageFormDto {
  @IsOptional()
  @IsString()
  _csrf?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  token?: string;

  @IsOptional()
  @IsString()
  @MaxLength(1000)
  new_password?: string;

  @IsOptional()
  @IsString()
  @MaxLength(1000)
  new_password_confirm?: string;
}
