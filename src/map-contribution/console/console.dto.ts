import { IsIn } from 'class-validator';
import { BlankAsMissing } from '../../admin/dto/console.dto.js';
import { ContributionListQueryDto, VerifiedQueryDto } from '../dto/map-contribution.dto.js';

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
