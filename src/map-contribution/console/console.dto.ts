import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsString,
  MaxLength,
  MinLength,
} from 'class-validator';
import { BlankAsMissing } from '../../admin/dto/console.dto.js';
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
        ? value
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
