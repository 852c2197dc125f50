import { BLOCKER_ORDER } from '../domain/eligibility.js';
import { CONTRIBUTION_STATUSES } from '../domain/state-machine.js';
import type { VerifiedValues } from '../domain/types.js';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { PaginationMeta, PaginationQueryDto } from '../../common/pagination/pagination.js';
import { MaxChars, NoNul } from '../../common/validation/text-rules.js';
import { ToBoolean, ToInt, Trim } from '../../common/validation/transforms.js';

export class ContributionListQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: CONTRIBUTION_STATUSES })
  @IsOptional()
  @IsIn(CONTRIBUTION_STATUSES)
  status?: string;

  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  eligible?: boolean;
}

/** Which optional values staff verified on site (query for the preview, body for the confirm). */
export class VerifiedQueryDto {
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  verified_name?: boolean;

  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  verified_brand?: boolean;

  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  verified_operator?: boolean;

  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  verified_website?: boolean;
}

/** The verification flags of a preview or confirm as the domain's values (unset is not verified). */
export const verifiedValues = (flags: VerifiedQueryDto): VerifiedValues => ({
  name: flags.verified_name ?? false,
  brand: flags.verified_brand ?? false,
  operator: flags.verified_operator ?? false,
  website: flags.verified_website ?? false,
});

export class ConfirmDto {
  @IsOptional()
  @IsBoolean()
  verified_name?: boolean;

  @IsOptional()
  @IsBoolean()
  verified_brand?: boolean;

  @IsOptional()
  @IsBoolean()
  verified_operator?: boolean;

  @IsOptional()
  @IsBoolean()
  verified_website?: boolean;
}

/** The batch confirm's verification flags: applied to every library of the request. */
export class BatchVerifiedDto {
  @IsOptional()
  @IsBoolean()
  name?: boolean;

  @IsOptional()
  @IsBoolean()
  brand?: boolean;

  @IsOptional()
  @IsBoolean()
  operator?: boolean;

  @IsOptional()
  @IsBoolean()
  website?: boolean;
}

export const BATCH_CONFIRM_MAX_SLUGS = 50;

export class BatchConfirmDto {
  @ApiProperty({
    type: [String],
    minItems: 1,
    maxItems: BATCH_CONFIRM_MAX_SLUGS,
    uniqueItems: true,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(BATCH_CONFIRM_MAX_SLUGS)
  @ArrayUnique()
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(255, { each: true })
  slugs: string[];

  @ApiPropertyOptional({ type: BatchVerifiedDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => BatchVerifiedDto)
  verified?: BatchVerifiedDto;
}

export class ResolveDto {
  @ApiProperty({ enum: ['same_feature', 'different_feature', 'unclear'] })
  @IsIn(['same_feature', 'different_feature', 'unclear'])
  outcome: 'same_feature' | 'different_feature' | 'unclear';

  @ApiPropertyOptional({ enum: ['node', 'way', 'relation'] })
  @ValidateIf((dto: ResolveDto) => dto.outcome === 'same_feature' || dto.element_type !== undefined)
  @IsIn(['node', 'way', 'relation'])
  element_type?: 'node' | 'way' | 'relation';

  @ValidateIf((dto: ResolveDto) => dto.outcome === 'same_feature' || dto.element_id !== undefined)
  @ToInt()
  @IsInt()
  @Min(1)
  @ApiPropertyOptional({ type: 'integer' })
  element_id?: number;

  /** Why; required for every outcome (it is the audit record). */
  @Trim()
  @IsString()
  @NoNul()
  @MinLength(1)
  @MaxLength(1000)
  @MaxChars(1000)
  reason: string;
}

export class UserRefDto {
  @ApiProperty({ type: 'integer' })
  id: number;
  username: string;
}

export class BlockerDto {
  @ApiProperty({ enum: BLOCKER_ORDER })
  code: string;
  message: string;
}

export class BlockedDetails {
  @ApiProperty({ type: [BlockerDto] })
  blockers: BlockerDto[];
}

/** 409: the action is refused now; `details.blockers` says why (the same codes as the record's blockers). */
export class BlockedResponse {
  @ApiProperty({ example: 'The action is not allowed for this library now.' })
  message: string;
  /** null when the request conflicts with existing data (e.g. an element already linked to another library). */
  @ApiProperty({ type: BlockedDetails, nullable: true })
  details: BlockedDetails | null;
}

export class ContributionLibraryDto {
  @ApiProperty({ type: 'integer' })
  id: number;
  slug: string;
  name: string;
  city: string;
  country: string;
  status: string;
  mapdb_submission_allowed: boolean;
}

export class ContributionEventDto {
  type: string;
  outcome: string;
  @ApiProperty({ type: UserRefDto, nullable: true })
  actor: UserRefDto | null;
  attempt_key: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  details: Record<string, unknown>;
  created_at: string;
}

export class HistoryLibraryDto {
  slug: string;
  name: string;
}

/** An event of the whole audit history with the library it concerns (null once the library was deleted). */
export class HistoryEventResponse extends ContributionEventDto {
  @ApiProperty({ type: HistoryLibraryDto, nullable: true })
  library: HistoryLibraryDto | null;
}

export class ContributionRecordResponse {
  library: ContributionLibraryDto;
  @ApiProperty({ enum: CONTRIBUTION_STATUSES })
  status: string;
  checked_at: string | null;
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } })
  duplicate_candidates: unknown[];
  @ApiProperty({ enum: ['node', 'way', 'relation'], nullable: true })
  mapdb_element_type: string | null;
  @ApiProperty({ type: 'integer', nullable: true })
  mapdb_element_id: number | null;
  @ApiProperty({ type: 'integer', nullable: true })
  changeset_id: number | null;
  contributed_at: string | null;
  @ApiProperty({ type: UserRefDto, nullable: true })
  contributed_by: UserRefDto | null;
  last_attempt_key: string | null;
  last_error_code: string;
  last_error_message: string;
  eligible: boolean;
  @ApiProperty({ type: [BlockerDto] })
  blockers: BlockerDto[];
  @ApiProperty({ type: [ContributionEventDto] })
  events: ContributionEventDto[];
}

export class ContributionPageResponse {
  @ApiProperty({ type: [ContributionRecordResponse] })
  items: ContributionRecordResponse[];
  pagination: PaginationMeta;
}

export class PreviewNodeDto {
  lat: number;
  lon: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  tags: Record<string, string>;
}

export class PreviewResponse {
  eligible: boolean;
  @ApiProperty({ type: [BlockerDto] })
  blockers: BlockerDto[];
  warnings: string[];
  node: PreviewNodeDto;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  changeset_tags: Record<string, string>;
}

export class BatchConfirmItemDto {
  slug: string;
  @ApiProperty({ enum: CONTRIBUTION_STATUSES })
  status: string;
  @ApiProperty({ type: 'integer', nullable: true })
  mapdb_element_id: number | null;
  /** Why the library was left out of the batch's changeset (empty when it was written). */
  @ApiProperty({ type: [BlockerDto] })
  blockers: BlockerDto[];
}

export class BatchConfirmBatchDto {
  city: string;
  country: string;
  /** The batch's one changeset; null when no library of the batch was eligible. */
  @ApiProperty({ type: 'integer', nullable: true })
  changeset_id: number | null;
  @ApiProperty({ type: [BatchConfirmItemDto] })
  items: BatchConfirmItemDto[];
}

export class BatchConfirmResponse {
  @ApiProperty({ type: [BatchConfirmBatchDto] })
  batches: BatchConfirmBatchDto[];
}
