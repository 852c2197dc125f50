import { Body, Controller, Param, Patch, UploadedFile, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser, OptionalAuth } from '../common/auth/auth.decorators.js';
import { PublicCache } from '../common/http/cache-control.js';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator.js';
import { FormBody } from '../common/validation/form-body.decorator.js';
import { LibraryDetailResponse, OwnerLibraryResponse } from './dto/library.response.js';
import { UpdateLibraryDto, UpdateLibraryForm } from './dto/update-library.dto.js';
import { SUBMISSION_PHOTO_UPLOAD } from '../common/media/photo-upload.interceptor.js';
import { LibrariesService, type UploadedPhoto } from './libraries.service.js';
import { ReadRoute } from '../common/http/read-route.decorator.js';

/**
 * GET/PATCH /libraries/{slug}. Its module is imported last so literal routes (`latest`, `countries`,
 * `favourites`, `mine`, `moderation`) are matched before the slug.
 */
@ApiTags('libraries')
@Controller('libraries')
export class LibraryDetailController {
  constructor(private readonly libraries: LibrariesService) {}

  /** One library with its approved community photos. Owners also see their own pending submissions. */
  @ReadRoute(LibraryDetailResponse, ':slug')
  @OptionalAuth()
  @PublicCache(60)
  detail(
    @CurrentUser() user: AuthUser | null,
    @Param('slug') slug: string,
  ): Promise<LibraryDetailResponse> {
    return this.libraries.detail(user, slug);
  }

  /**
   * Owner edit (multipart/form-data). A pending library changes in place; an approved one keeps its published
   * values and the edit awaits moderation in `pending_changes`.
   */
  @Patch(':slug')
  @RateLimit('write')
  @UseInterceptors(SUBMISSION_PHOTO_UPLOAD)
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: UpdateLibraryForm })
  @ApiOkResponse({ type: OwnerLibraryResponse })
  update(
    @CurrentUser() user: AuthUser,
    @Param('slug') slug: string,
    @Body() raw: Record<string, unknown>,
    @FormBody() form: UpdateLibraryDto,
    @UploadedFile() photo: UploadedPhoto | undefined,
  ): Promise<OwnerLibraryResponse> {
    return this.libraries.update(user, slug, raw, form, photo);
  }
}
