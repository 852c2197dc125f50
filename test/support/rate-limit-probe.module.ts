import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Injectable,
  Module,
  Post,
  SetMetadata,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import { ApiOkResponse } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { Public } from '../../src/common/auth/public.decorator.js';
import { ApiError } from '../../src/common/errors/api-error.js';
import { RateLimit } from '../../src/common/rate-limit/rate-limit.decorator.js';

export class RateLimitProbeBodyDto {
  @IsString()
  @MaxLength(5)
  name: string;
}

/** Stands in for authentication: refuses every request, so a test can show the rate limit answers first. */
@Injectable()
class RefuseEveryoneGuard implements CanActivate {
  canActivate(): boolean {
    throw ApiError.unauthorized();
  }
}

const REFUSE_KEY = 'probe-rl:refuse';

/**
 * A global guard like the authentication one (registered by a feature module, after the app's own guards):
 * refuses the routes marked with REFUSE_KEY and lets every other route through.
 */
@Injectable()
class RefuseMarkedGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (this.reflector.get<boolean>(REFUSE_KEY, context.getHandler()))
      throw ApiError.unauthorized();
    return true;
  }
}

/**
 * Test-only routes, one per rate-limit tier, plus two sharing a named bucket (as favourite POST and DELETE do),
 * a second read route with a counter of its own, and read routes refused by a route guard and by a global guard.
 */
@Public()
@Controller('probe-rl')
class RateLimitProbeController {
  @Get('read')
  @RateLimit('read')
  @ApiOkResponse()
  read() {
    return { ok: true };
  }

  @Get('read-other')
  @RateLimit('read')
  @ApiOkResponse()
  readOther() {
    return { ok: true };
  }

  @Get('map')
  @RateLimit('map')
  @ApiOkResponse()
  map() {
    return { ok: true };
  }

  @Post('write')
  @RateLimit('write')
  @ApiOkResponse()
  write(@Body() body: RateLimitProbeBodyDto) {
    return body;
  }

  @Post('login')
  @HttpCode(200)
  @RateLimit('login')
  @ApiOkResponse()
  login() {
    return { ok: true };
  }

  @Post('register')
  @RateLimit('register')
  @ApiOkResponse()
  register() {
    return { ok: true };
  }

  @Post('refresh')
  @HttpCode(200)
  @RateLimit('refresh')
  @ApiOkResponse()
  refresh() {
    return { ok: true };
  }

  @Post('social')
  @HttpCode(200)
  @RateLimit('social')
  @ApiOkResponse()
  social() {
    return { ok: true };
  }

  @Post('shared')
  @RateLimit('write', { bucket: 'probe-shared' })
  @ApiOkResponse()
  sharedAdd() {
    return { ok: true };
  }

  @Delete('shared')
  @HttpCode(204)
  @RateLimit('write', { bucket: 'probe-shared' })
  @ApiOkResponse()
  sharedRemove(): void {}

  @Get('guarded')
  @RateLimit('read')
  @UseGuards(RefuseEveryoneGuard)
  @ApiOkResponse()
  guarded() {
    return { ok: true };
  }

  @Get('guarded-global')
  @RateLimit('read')
  @SetMetadata(REFUSE_KEY, true)
  @ApiOkResponse()
  guardedGlobal() {
    return { ok: true };
  }
}

@Module({
  controllers: [RateLimitProbeController],
  providers: [RefuseEveryoneGuard, { provide: APP_GUARD, useClass: RefuseMarkedGuard }],
})
export class RateLimitProbeModule {}
