import { Body, Controller, Delete, HttpCode, HttpStatus, Param, Post, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/auth.decorators.js';
import { ErrorResponse } from '../common/errors/error.response.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { DevicesService } from './devices.service.js';
import { DeviceResponse } from './dto/device.response.js';
import { RegisterDeviceDto } from './dto/register-device.dto.js';

/** Push notification device tokens of the signed-in user. */
@ApiTags('auth')
@ApiBearerAuth('bearer')
@Controller('auth/devices')
export class DevicesController {
  constructor(private readonly devices: DevicesService) {}

  @Post()
  @RateLimit('write')
  @ApiOperation({ summary: 'Register this device for push notifications' })
  @ApiCreatedResponse({ type: DeviceResponse, description: 'Registered for the caller.' })
  @ApiOkResponse({
    type: DeviceResponse,
    description: 'The caller already held the token; environment updated.',
  })
  @ApiConflictResponse({
    type: ErrorResponse,
    description:
      'This device token is registered to another account (whose session on it is still live).',
  })
  async register(
    @CurrentUser() user: AuthUser,
    @Body() dto: RegisterDeviceDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<DeviceResponse> {
    const result = await this.devices.register(user, dto);
    response.status(result.created ? HttpStatus.CREATED : HttpStatus.OK);
    return result.device;
  }

  @Delete(':token')
  @HttpCode(HttpStatus.NO_CONTENT)
  @RateLimit('write')
  @ApiOperation({ summary: "Unregister one of the caller's device tokens" })
  @ApiNoContentResponse({ description: 'Unregistered.' })
  @ApiNotFoundResponse({ type: ErrorResponse, description: 'Not a token of the caller.' })
  async remove(@CurrentUser() user: AuthUser, @Param('token') token: string): Promise<void> {
    await this.devices.remove(user, token);
  }
}
