import { Controller, Delete, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/auth.decorators.js';
import { PaginationQueryDto, type Page } from '../common/pagination/pagination.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import {
  LibraryPageResponse,
  type LibraryItemResponse,
} from '../libraries/dto/library.response.js';
import { MessageResponse } from './message.response.js';
import { ADDED_MESSAGE, ALREADY_MESSAGE, FavouritesService } from './favourites.service.js';
import { ReadRoute } from '../common/http/read-route.decorator.js';

/** POST and DELETE share one rate-limit counter (decisions §2). */
const FAVOURITE_BUCKET = 'favourite';

@ApiTags('favourites')
@Controller('libraries')
export class FavouritesController {
  constructor(private readonly favourites: FavouritesService) {}

  /** The caller's favourites that are still approved, most recently favourited first. */
  @ReadRoute(LibraryPageResponse, 'favourites')
  list(
    @CurrentUser() user: AuthUser,
    @Query() query: PaginationQueryDto,
  ): Promise<Page<LibraryItemResponse>> {
    return this.favourites.list(user, query);
  }

  /** Mark an approved library as a favourite: 201 when added, 200 when it already was. */
  @Post(':slug/favourite')
  @RateLimit('write', { bucket: FAVOURITE_BUCKET })
  @ApiCreatedResponse({ type: MessageResponse, description: ADDED_MESSAGE })
  @ApiOkResponse({ type: MessageResponse, description: ALREADY_MESSAGE })
  async add(
    @CurrentUser() user: AuthUser,
    @Param('slug') slug: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<MessageResponse> {
    const added = await this.favourites.add(user, slug);
    res.status(added ? 201 : 200);
    return { message: added ? ADDED_MESSAGE : ALREADY_MESSAGE };
  }

  /** Unmark; idempotent. */
  @Delete(':slug/favourite')
  @HttpCode(204)
  @RateLimit('write', { bucket: FAVOURITE_BUCKET })
  @ApiNoContentResponse()
  async remove(@CurrentUser() user: AuthUser, @Param('slug') slug: string): Promise<void> {
    await this.favourites.remove(user, slug);
  }
}
