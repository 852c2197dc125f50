import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/auth.decorators.js';
import { PaginationQueryDto, type Page } from '../common/pagination/pagination.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { MyPhotoPageResponse, type MyPhotoResponse } from '../libraries/dto/library.response.js';
import { CommunityPhotosService } from './community-photos.service.js';

@ApiTags('community photos')
@Controller('libraries')
export class CommunityPhotosController {
  constructor(private readonly photos: CommunityPhotosService) {}

  /** The caller's community photos with their moderation status, newest first. */
  @Get('mine/photos')
  @RateLimit('read')
  @ApiOkResponse({ type: MyPhotoPageResponse })
  mine(@CurrentUser() user: AuthUser, @Query() query: PaginationQueryDto): Promise<Page<MyPhotoResponse>> {
    return this.photos.mine(user, query);
  }
}
