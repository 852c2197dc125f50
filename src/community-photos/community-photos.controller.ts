import { Controller, Param, Post, Query, UploadedFile } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  IdempotencyKey,
  IdempotentFormCreate,
} from '../common/idempotency/idempotency-key.decorator.js';
import { FormBody } from '../common/validation/form-body.decorator.js';
import { SUBMISSION_PHOTO_UPLOAD } from '../common/media/photo-upload.interceptor.js';
import type { UploadedPhoto } from '../libraries/libraries.service.js';
import {
  CommunityPhotoResponse,
  CreateCommunityPhotoDto,
  CreateCommunityPhotoForm,
} from './dto/create-community-photo.dto.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/auth.decorators.js';
import { PaginationQueryDto, type Page } from '../common/pagination/pagination.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { MyPhotoPageResponse, type MyPhotoResponse } from '../libraries/dto/library.response.js';
import { CommunityPhotosService } from './community-photos.service.js';
import { ReadRoute } from '../common/http/read-route.decorator.js';

@ApiTags('community photos')
@Controller('libraries')
export class CommunityPhotosController {
  constructor(private readonly photos: CommunityPhotosService) {}

  /** Add a photo to an approved library (multipart/form-data); it awaits moderation. */
  @Post(':slug/photo')
  @RateLimit('write')
  @IdempotentFormCreate({
    form: CreateCommunityPhotoForm,
    created: CommunityPhotoResponse,
    upload: SUBMISSION_PHOTO_UPLOAD,
  })
  create(
    @CurrentUser() user: AuthUser,
    @Param('slug') slug: string,
    @FormBody() form: CreateCommunityPhotoDto,
    @UploadedFile() photo: UploadedPhoto | undefined,
    @IdempotencyKey() idempotencyKey: string | null,
  ): Promise<CommunityPhotoResponse> {
    return this.photos.create(user, slug, form, photo, idempotencyKey);
  }

  /** The caller's community photos with their moderation status, newest first. */
  @ReadRoute(MyPhotoPageResponse, 'mine/photos')
  mine(
    @CurrentUser() user: AuthUser,
    @Query() query: PaginationQueryDto,
  ): Promise<Page<MyPhotoResponse>> {
    return this.photos.mine(user, query);
  }
}
