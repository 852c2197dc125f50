import { Controller, Post, Query, UploadedFile } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser, OptionalAuth } from '../common/auth/auth.decorators.js';
import { PublicCache } from '../common/http/cache-control.js';
import {
  IdempotencyKey,
  IdempotentFormCreate,
} from '../common/idempotency/idempotency-key.decorator.js';
import { SUBMISSION_PHOTO_UPLOAD } from '../common/media/photo-upload.interceptor.js';
import { PaginationQueryDto, type Page } from '../common/pagination/pagination.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { FormBody } from '../common/validation/form-body.decorator.js';
import { CreateLibraryDto, CreateLibraryForm } from './dto/create-library.dto.js';
import {
  CountryListResponse,
  CreatedLibraryResponse,
  LatestLibrariesResponse,
  LibraryPageResponse,
  MyLibraryPageResponse,
  type LibraryItemResponse,
  type MyLibraryResponse,
} from './dto/library.response.js';
import { LatestLibrariesQueryDto, ListLibrariesQueryDto } from './dto/list-libraries.query.js';
import { LibrariesService, type UploadedPhoto } from './libraries.service.js';
import { ReadRoute } from '../common/http/read-route.decorator.js';

/** The collection routes of /libraries/. `/{slug}` lives in LibraryDetailController, registered last. */
@ApiTags('libraries')
@Controller('libraries')
export class LibrariesController {
  constructor(private readonly libraries: LibrariesService) {}

  /** Approved libraries: text search (q), substring search, filters, proximity; newest first by default. */
  @ReadRoute(LibraryPageResponse)
  @OptionalAuth()
  @PublicCache(60)
  list(
    @CurrentUser() user: AuthUser | null,
    @Query() query: ListLibrariesQueryDto,
  ): Promise<Page<LibraryItemResponse>> {
    return this.libraries.list(user, query);
  }

  /** The newest approved libraries. */
  @ReadRoute(LatestLibrariesResponse, 'latest')
  @OptionalAuth()
  @PublicCache(60)
  latest(
    @CurrentUser() user: AuthUser | null,
    @Query() query: LatestLibrariesQueryDto,
  ): Promise<LatestLibrariesResponse> {
    return this.libraries.latest(user, query);
  }

  /** Countries with approved libraries and their counts, most first. */
  @ReadRoute(CountryListResponse, 'countries')
  @OptionalAuth()
  @PublicCache(300)
  countries(): Promise<CountryListResponse> {
    return this.libraries.countries();
  }

  /** The caller's submissions, pending first, with moderation status and their own permission value. */
  @ReadRoute(MyLibraryPageResponse, 'mine')
  mine(
    @CurrentUser() user: AuthUser,
    @Query() query: PaginationQueryDto,
  ): Promise<Page<MyLibraryResponse>> {
    return this.libraries.mine(user, query);
  }

  /** Submit a library with its photo (multipart/form-data). It awaits moderation. */
  @Post()
  @RateLimit('write')
  @IdempotentFormCreate({
    form: CreateLibraryForm,
    created: CreatedLibraryResponse,
    upload: SUBMISSION_PHOTO_UPLOAD,
  })
  create(
    @CurrentUser() user: AuthUser,
    @FormBody() form: CreateLibraryDto,
    @UploadedFile() photo: UploadedPhoto | undefined,
    @IdempotencyKey() idempotencyKey: string | null,
  ): Promise<CreatedLibraryResponse> {
    return this.libraries.create(user, form, photo, idempotencyKey);
  }
}
