import { IsBoolean, IsOptional, IsString, Length, MaxLength, MinLength } from 'class-validator';
import { Trim } from '../../common/validation/transforms.js';

export class SocialLoginDto {
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

  /**
   * The version of the contributor agreement the client showed (with `contributor_agreement_accepted`). Send both
   * or neither; see the README's "Contributor agreement" for what happens in each case.
   */
  @IsOptional()
  @IsString()
  @Length(1, 64)
  contributor_agreement_version?: string;

  /** true when the user accepted that version (send with `contributor_agreement_version`). */
  @IsOptional()
  @IsBoolean()
  contributor_agreement_accepted?: boolean;
}
