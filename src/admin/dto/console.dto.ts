import { Transform } from 'class-transformer';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { LoginDto } from '../../auth/dto/login.dto.js';
import {
  ModerationLibrariesQueryDto,
  ModerationPhotosQueryDto,
  ModerationReportsQueryDto,
} from '../../moderation/dto/moderation.dto.js';

/**
 * A filter form sends every field, empty ones as "": an empty filter means "no filter". Runs after the inherited
 * transforms (class-transformer applies a parent's before a subclass's).
 */
export const BlankAsMissing = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && value.trim() === '' ? undefined : value,
  );

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
