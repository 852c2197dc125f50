import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { LoginDto } from '../../auth/dto/login.dto.js';
import {
  ModerationLibrariesQueryDto,
  ModerationPhotosQueryDto,
  ModerationReportsQueryDto,
  StaffUpdateLibraryDto,
  UpdateLibraryStatusDto,
} from '../../moderation/dto/moderation.dto.js';

/** A form field sent as "" (or blanks) stands for `replacement`. Runs after the inherited transforms. */
const BlankAs = (replacement: null | undefined): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && value.trim() === '' ? replacement : value,
  );

/**
 * A filter form sends every field, empty ones as "": an empty filter means "no filter". Runs after the inherited
 * transforms (class-transformer applies a parent's before a subclass's).
 */
export const BlankAsMissing = (): PropertyDecorator => BlankAs(undefined);

/** The sign-in form: the API's login fields plus the console page to continue to. */
export class ConsoleSignInDto extends LoginDto {
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  next?: string;
}

/** The console's queues open on the work that waits: pending libraries and photos, open reports. */
export class ConsoleLibrariesQueryDto extends ModerationLibrariesQueryDto {
  override status = 'pending';

  @BlankAsMissing()
  override q?: string = undefined;

  @BlankAsMissing()
  override country?: string = undefined;

  @BlankAsMissing()
  override source?: string = undefined;
}

export class ConsolePhotosQueryDto extends ModerationPhotosQueryDto {
  override status = 'pending';
}

export class ConsoleReportsQueryDto extends ModerationReportsQueryDto {
  override status = 'open';
}

/** The status forms; `confirm_blank=yes` approves a library whose name or description is blank after the warning. */
export class ConsoleLibraryStatusDto extends UpdateLibraryStatusDto {
  @IsOptional()
  @IsIn(['yes'])
  confirm_blank?: 'yes';
}

/** An "unknown" choice of the edit form ("") clears the value (null). */
const BlankAsNull = (): PropertyDecorator => BlankAs(null);

/** The staff edit form: every field is sent, with its current value; "unknown" clears capacity, indoor and lit. */
export class ConsoleEditLibraryDto extends StaffUpdateLibraryDto {
  @BlankAsNull()
  override capacity?: number = undefined;

  @BlankAsNull()
  override is_indoor?: boolean = undefined;

  @BlankAsNull()
  override is_lit?: boolean = undefined;

  @BlankAsMissing()
  override status?: StaffUpdateLibraryDto['status'] = undefined;
}
