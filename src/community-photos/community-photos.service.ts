import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth/auth-user.js';
import { InvalidFieldsError, NotFoundError, RefusedError } from '../common/errors/domain-errors.js';
import { MediaStorage } from '../common/media/media-storage.js';
import { LibrariesRepository } from '../libraries/libraries.repository.js';
import { libraryRef } from '../libraries/library.mapper.js';
import { PhotoStore, type UploadedPhoto } from '../common/media/photo-store.js';
import type {
  CommunityPhotoResponse,
  CreateCommunityPhotoDto,
} from './dto/create-community-photo.dto.js';
import { paginate, type Page, type PaginationQueryDto } from '../common/pagination/pagination.js';
import type { MyPhotoResponse } from '../libraries/dto/library.response.js';
import {
  CommunityPhotosRepository,
  PHOTOS_PER_USER_PER_LIBRARY,
  type CommunityPhotoRow,
} from './community-photos.repository.js';
import { NotificationQueue } from '../notifications/notification.queue.js';
import { IdempotencyService } from '../common/idempotency/idempotency.service.js';

function photoResponse(row: CommunityPhotoRow): CommunityPhotoResponse {
  return {
    id: row.id,
    caption: row.caption,
    status: row.status,
    created_at: new Date(row.created_at).toISOString(),
  };
}

export const PHOTO_LIMIT_MESSAGE = `You can submit at most ${PHOTOS_PER_USER_PER_LIBRARY} photos per library.`;

@Injectable()
export class CommunityPhotosService {
  constructor(
    private readonly photos: CommunityPhotosRepository,
    private readonly media: MediaStorage,
    private readonly libraries: LibrariesRepository,
    private readonly photoStore: PhotoStore,
    private readonly notifications: NotificationQueue,
    private readonly idempotency: IdempotencyService,
  ) {}

  /**
   * A community photo for an approved library, pending moderation; at most 3 pending or approved per user. With an
   * `Idempotency-Key`, a retry of the same request answers the original result (recorded in the insert's
   * transaction), the same key with another request 409.
   */
  async create(
    user: AuthUser,
    slug: string,
    dto: CreateCommunityPhotoDto,
    file: UploadedPhoto | undefined,
    idempotencyKey: string | null = null,
  ): Promise<CommunityPhotoResponse> {
    if (!file)
      throw InvalidFieldsError.single(['file', 'photo'], 'A photo is required.', 'missing');
    const request = await this.idempotency.identify(
      user.id,
      idempotencyKey,
      'community-photos.create',
      { slug, ...dto },
      file.path,
    );
    const earlier = await this.idempotency.replay(request);
    if (earlier) return earlier.body as CommunityPhotoResponse;
    const library = await this.libraries.findBySlug(slug, null);
    if (!library || library.status !== 'approved') throw new NotFoundError();
    // Cheap early refusal; the authoritative check runs under the lock below.
    if ((await this.photos.countActive(user.id, library.id)) >= PHOTOS_PER_USER_PER_LIBRARY) {
      throw new RefusedError(PHOTO_LIMIT_MESSAGE);
    }
    const stored = await this.photoStore.store(file, 'photos');
    let row: CommunityPhotoRow | null;
    try {
      row = await this.photoStore.withFiles(stored, () =>
        this.photos.insertWithinLimit(
          {
            libraryId: library.id,
            userId: user.id,
            caption: dto.caption ?? '',
            photoKey: stored.photo_key,
            thumbnailKey: stored.thumbnail_key,
          },
          async (tx, inserted) => {
            await this.notifications.moderationWork(tx, user.id);
            await this.idempotency.record(tx, request, inserted.id, 201, photoResponse(inserted));
          },
        ),
      );
    } catch (error) {
      const first = await this.idempotency.replayAfterFailure(request, error);
      if (first) return first.body as CommunityPhotoResponse;
      throw error;
    }
    if (!row) {
      await this.photoStore.discard(stored);
      throw new RefusedError(PHOTO_LIMIT_MESSAGE);
    }
    return photoResponse(row);
  }

  mine(user: AuthUser, query: PaginationQueryDto): Promise<Page<MyPhotoResponse>> {
    return paginate(
      query,
      () => this.photos.countByCreator(user.id),
      async (limit, offset) =>
        (await this.photos.findByCreator(user.id, limit, offset)).map((row) => ({
          id: row.id,
          library: libraryRef(row),
          caption: row.caption,
          photo_url: this.media.url(row.photo_key),
          thumbnail_url: this.media.url(row.thumbnail_key),
          status: row.status,
          created_at: new Date(row.created_at).toISOString(),
        })),
    );
  }
}
