import { IsBoolean, IsOptional, IsString, Length } from 'class-validator';

/** The contributor agreement fields that registration and social sign-in share (README "Contributor agreement"). */
export class ContributorAgreementDto {
  /** The version of the contributor agreement the client showed. Send it with `contributor_agreement_accepted`. */
  @IsOptional()
  @IsString()
  @Length(1, 64)
  contributor_agreement_version?: string;

  /** true when the user accepted that version. Send it with `contributor_agreement_version`. */
  @IsOptional()
  @IsBoolean()
  contributor_agreement_accepted?: boolean;
}
