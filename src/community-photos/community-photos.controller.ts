import {
  Controller,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConflictResponse,
  ApiConsumes,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { ErrorResponse } from '../common/errors/error.response.js';
import {
  ApiIdempotencyKeyHeader,
  IDEMPOTENCY_CONFLICT_DESCRIPTION,
  IdempotencyKey,
} from '../common/idempotency/idempotency-key.decorator.js';
import { FormBody } from '../common/validation/form-body.decorator.js';
import { SUBMISSION_PHOTO_UPLOAD } from '../libraries/libraries.controller.js';
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

@ApiTags('community photos')
@Controller('libraries')
export class CommunityPhotosController {
  constructor(private readonly photos: CommunityPhotosService) {}

  /** Add a photo to an approved library (multipart/form-data); it awaits moderation. */
  @Post(':slug/photo')
  @HttpCode(201)
  @RateLimit('write')
  @UseInterceptors(SUBMISSION_PHOTO_UPLOAD)
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: CreateCommunityPhotoForm })
  @ApiCreatedResponse({
    type: CommunityPhotoResponse,
    description: 'Created; also the answer to a retry with the same Idempotency-Key and request.',
  })
  @ApiIdempotencyKeyHeader()
  @ApiConflictResponse({ type: ErrorResponse, description: IDEMPOTENCY_CONFLICT_DESCRIPTION })
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
  @Get('mine/photos')
  @RateLimit('read')
  @ApiOkResponse({ type: MyPhotoPageResponse })
  mine(
    @CurrentUser() user: AuthUser,
    @Query() query: PaginationQueryDto,
  ): Promise<Page<MyPhotoResponse>> {
    return this.photos.mine(user, query);
  }
}
