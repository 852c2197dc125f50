import { Body, Controller, Patch } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/auth.decorators.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { UserResponse } from './dto/auth.response.js';
import { UpdateNotificationSettingsDto } from './dto/notification-settings.dto.js';
import { NotificationSettingsService } from './notification-settings.service.js';

/** The signed-in user's notice preferences (decisions §3: `notifications: {email, push}` on the user). */
@ApiTags('auth')
@ApiBearerAuth('bearer')
@Controller('auth/me/notifications')
export class NotificationSettingsController {
  constructor(private readonly settings: NotificationSettingsService) {}

  @Patch()
  @RateLimit('write')
  @ApiOperation({
    summary: 'Turn notices about your submissions on or off, by email and by push',
    description:
      'Both default to true. Security notices (password reset, password or email changed) are always sent. ' +
      'Answers the user, as GET /auth/me. A body with neither key is a 422.',
  })
  @ApiOkResponse({ type: UserResponse })
  update(
    @CurrentUser() user: AuthUser,
    @Body() dto: UpdateNotificationSettingsDto,
  ): Promise<UserResponse> {
    return this.settings.update(user, dto);
  }
}
