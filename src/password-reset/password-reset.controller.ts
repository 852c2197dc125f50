import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { Public } from '../common/auth/public.decorator.js';
import { ErrorResponse } from '../common/errors/error.response.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { PasswordResetConfirmDto, PasswordResetRequestDto } from './dto/password-reset.dto.js';
import { PasswordResetMessageResponse } from './dto/password-reset.response.js';
import { PasswordResetService } from './password-reset.service.js';

/** The reset page and this API form share one counter per client. */
export const RESET_CONFIRM_BUCKET = 'password-reset-confirm';

@ApiTags('auth')
@Public()
@Controller('auth/password/reset')
export class PasswordResetController {
  constructor(private readonly reset: PasswordResetService) {}

  @Post()
  @HttpCode(HttpStatus.OK)
  @RateLimit('password_reset')
  @ApiOperation({
    summary: 'Ask for a password reset link by email',
    description:
      'Always the same answer, whether or not an account uses the address. The email holds a link to ' +
      '`/reset-password` valid for 1 hour, once. Limited per client IP and per address ' +
      '(`RATE_LIMIT_PASSWORD_RESET` per window each).',
  })
  @ApiOkResponse({ type: PasswordResetMessageResponse })
  @ApiBadRequestResponse({ type: ErrorResponse, description: 'Provide a valid email address.' })
  @ApiTooManyRequestsResponse({
    type: ErrorResponse,
    description: 'Too many password reset attempts. Please try again later.',
  })
  request(@Body() dto: PasswordResetRequestDto): Promise<PasswordResetMessageResponse> {
    return this.reset.request(dto.email);
  }

  @Post('confirm')
  @HttpCode(HttpStatus.OK)
  @RateLimit('password_reset', { bucket: RESET_CONFIRM_BUCKET })
  @ApiOperation({
    summary: 'Set a new password with the token of a reset link',
    description:
      'For apps that open the link themselves. Every session of the account is signed out; a social-only ' +
      'account gets its first password (`is_social_only` becomes false). A notice goes to the address.',
  })
  @ApiOkResponse({ type: PasswordResetMessageResponse })
  @ApiBadRequestResponse({
    type: ErrorResponse,
    description:
      'This password reset link is invalid, expired or already used. Ask for a new one. / New passwords do ' +
      'not match. / password policy',
  })
  confirm(@Body() dto: PasswordResetConfirmDto): Promise<PasswordResetMessageResponse> {
    return this.reset.confirm(dto);
  }
}
