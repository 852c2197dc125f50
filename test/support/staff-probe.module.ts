import { Controller, Get, Module } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import type { AuthUser } from '../../src/common/auth/auth-user.js';
import { CurrentUser, OptionalAuth, StaffOnly } from '../../src/common/auth/auth.decorators.js';
import { Public } from '../../src/common/auth/public.decorator.js';
import { RateLimit } from '../../src/common/rate-limit/rate-limit.decorator.js';

/** Test-only routes, one per guard behaviour: default (token required), @StaffOnly, @OptionalAuth, @Public. */
@Controller('staff-probe')
class StaffProbeController {
  @Get('private')
  @RateLimit('read')
  @ApiOkResponse()
  privateRoute(@CurrentUser() user: AuthUser | null) {
    return { user };
  }

  @Get('staff')
  @StaffOnly()
  @RateLimit('read')
  @ApiOkResponse()
  staffRoute(@CurrentUser() user: AuthUser | null) {
    return { user };
  }

  @Get('optional')
  @OptionalAuth()
  @RateLimit('read')
  @ApiOkResponse()
  optionalRoute(@CurrentUser() user: AuthUser | null) {
    return { user };
  }

  @Get('public')
  @Public()
  @RateLimit('read')
  @ApiOkResponse()
  publicRoute(@CurrentUser() user: AuthUser | null) {
    return { user };
  }
}

@Module({ controllers: [StaffProbeController] })
export class StaffProbeModule {}
