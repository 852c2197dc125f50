import { IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { Trim } from '../../common/validation/transforms.js';
import { ContributorAgreementDto } from './contributor-agreement.dto.js';

export class SocialLoginDto extends ContributorAgreementDto {
  /** `apple` or `google`. */
  @IsString()
  provider: string;

  /** The identity token from the provider's native sign-in SDK. */
  @IsString()
  @MinLength(20)
  id_token: string;

  /** Sent by the app on the first sign-in only (the provider supplies names once). */
  @IsOptional()
  @Trim()
  @IsString()
  @MaxLength(150)
  first_name?: string;

  @IsOptional()
  @Trim()
  @IsString()
  @MaxLength(150)
  last_name?: string;
}
