import { IsString, Length, Matches } from 'class-validator';
import { Trim } from '../../common/validation/transforms.js';
import { ContributorAgreementDto } from './contributor-agreement.dto.js';

export const NO_CONTROL_CHARACTERS = /^[^\p{Cc}]*$/u;

export class RegisterDto extends ContributorAgreementDto {
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
}
