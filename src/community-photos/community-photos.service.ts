import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth/auth-user.js';
import { MediaStorage } from '../common/media/media-storage.js';
import { paginate, type Page, type PaginationQueryDto } from '../common/pagination/pagination.js';
import type { MyPhotoResponse } from '../libraries/dto/library.response.js';
import { CommunityPhotosRepository } from './community-photos.repository.js';

@Injectable()
export class CommunityPhotosService {
  constructor(
    private readonly photos: CommunityPhotosRepository,
    private readonly media: MediaStorage,
  ) {}

  mine(user: AuthUser, query: PaginationQueryDto): Promise<Page<MyPhotoResponse>> {
    return paginate(
      query,
      () => this.photos.countByCreator(user.id),
      async (limit, offset) =>
        (await this.photos.findByCreator(user.id, limit, offset)).map((row) => ({
          id: row.id,
          library: {
            id: row.library_id,
            slug: row.library_slug,
            name: row.library_name,
            city: row.library_city,
            country: row.library_country,
            status: row.library_status,
          },
          caption: row.caption,
          photo_url: this.media.url(row.photo_key),
          thumbnail_url: this.media.url(row.thumbnail_key),
          status: row.status,
          created_at: new Date(row.created_at).toISOString(),
        })),
    );
  }
}
