import { IsBoolean, IsOptional, IsString, Length, Matches } from 'class-validator';
import { Trim } from '../../common/validation/transforms.js';

export const NO_CONTROL_CHARACTERS = /^[^\p{Cc}]*$/u;

export class RegisterDto {
  /** 3–150 characters after trimming; unique, case-insensitively. */
  @Trim()
  @IsString()
  @Length(3, 150)
  @Matches(NO_CONTROL_CHARACTERS, { message: 'username must not contain control characters' })
  username: string;

  /** A valid email address; trimmed and stored lower-case; unique, case-insensitively. */
  @Trim()
  @IsString()
  email: string;

  /** 8–128 characters, checked against the password policy (400 with the policy's message). */
  @IsString()
  password: string;

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
