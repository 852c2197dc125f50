import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { BlankAsMissing } from '../../admin/dto/console.dto.js';
import { PaginationQueryDto } from '../../common/pagination/pagination.js';
import { ToInt, Trim } from '../../common/validation/transforms.js';
import { AUDIT_KINDS } from '../../moderation-audit/dto/moderation-audit.dto.js';
import {
  BATCH_CONFIRM_MAX_SLUGS,
  ContributionListQueryDto,
  VerifiedQueryDto,
} from '../dto/map-contribution.dto.js';

/** The list filters as the console's form sends them ("" for "any"). */
export class ConsoleContributionsQueryDto extends ContributionListQueryDto {
  @BlankAsMissing()
  override status?: string = undefined;

  @BlankAsMissing()
  override eligible?: boolean = undefined;
}

/** The confirm form: the verification checkboxes (as on the preview) and the explicit confirmation. */
export class ConsoleConfirmDto extends VerifiedQueryDto {
  @IsIn(['yes'], { message: 'Tick “I confirm this write” to send it to the map database.' })
  confirm_write: string;
}

/** Withdrawal cannot be undone, so its form carries an explicit confirmation too. */
export class ConsoleWithdrawDto {
  @IsIn(['yes'], {
    message: 'Tick “I understand this cannot be undone” to withdraw the permission.',
  })
  confirm_withdraw: string;
}

/** The libraries ticked for a batch write: a form sends one `slugs` field per box (a string when only one). */
export class ConsoleBatchQueryDto extends VerifiedQueryDto {
  @Transform(({ value }: { value: unknown }) =>
    value === undefined || value === null || value === ''
      ? []
      : Array.isArray(value)
        ? (value as unknown[])
        : [value],
  )
  @IsArray()
  @ArrayMinSize(1, { message: 'Select at least one library for the batch.' })
  @ArrayMaxSize(BATCH_CONFIRM_MAX_SLUGS, {
    message: `A batch holds at most ${BATCH_CONFIRM_MAX_SLUGS} libraries.`,
  })
  @ArrayUnique()
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(255, { each: true })
  slugs: string[];
}

export class ConsoleBatchConfirmDto extends ConsoleBatchQueryDto {
  @IsIn(['yes'], { message: 'Tick “I confirm these writes” to send them to the map database.' })
  confirm_write: string;
}

/** The audit page's "kind" for the map-contribution events (kept in their own table). */
export const MAP_CONTRIBUTION_KIND = 'map_contribution';

/**
 * The audit page: staff decisions (`page`) and map-contribution events (`events_page`) in one view, filtered by
 * kind, actor (username) and library (slug); "" means no filter.
 */
export class ConsoleAuditQueryDto extends PaginationQueryDto {
  @BlankAsMissing()
  @IsOptional()
  @IsIn([...AUDIT_KINDS, MAP_CONTRIBUTION_KIND])
  kind?: string = undefined;

  @BlankAsMissing()
  @IsOptional()
  @Trim()
  @IsString()
  @MaxLength(150)
  actor?: string = undefined;

  @BlankAsMissing()
  @IsOptional()
  @Trim()
  @IsString()
  @MaxLength(255)
  library?: string = undefined;

  @IsOptional()
  @ToInt()
  @IsInt()
  @Min(1)
  events_page: number = 1;
}
