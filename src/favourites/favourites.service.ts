import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth/auth-user.js';
import { NotFoundError } from '../common/errors/domain-errors.js';
import {
  paginateTogether,
  type Page,
  type PaginationQueryDto,
} from '../common/pagination/pagination.js';
import type { LibraryItemResponse } from '../libraries/dto/library.response.js';
import { LibrariesRepository } from '../libraries/libraries.repository.js';
import { LibraryMapper } from '../libraries/library.mapper.js';
import { FavouritesRepository } from './favourites.repository.js';

export const ADDED_MESSAGE = 'Library added to favourites.';
export const ALREADY_MESSAGE = 'Library is already in your favourites.';

@Injectable()
export class FavouritesService {
  constructor(
    private readonly favourites: FavouritesRepository,
    private readonly libraries: LibrariesRepository,
    private readonly mapper: LibraryMapper,
  ) {}

  list(user: AuthUser, query: PaginationQueryDto): Promise<Page<LibraryItemResponse>> {
    return paginateTogether(
      query,
      async (limit, offset) => {
        const { total, rows } = await this.favourites.countAndFindApproved(user.id, limit, offset);
        return { total, items: rows.map((row) => this.mapper.item(row)) };
      },
      async (limit, offset) =>
        (await this.favourites.findApproved(user.id, limit, offset)).map((row) =>
          this.mapper.item(row),
        ),
    );
  }

  /** True when newly added. Only approved libraries can be favourited (else 404). */
  async add(user: AuthUser, slug: string): Promise<boolean> {
    return this.favourites.add(user.id, await this.approvedId(slug));
  }

  async remove(user: AuthUser, slug: string): Promise<void> {
    await this.favourites.remove(user.id, await this.approvedId(slug));
  }

  private async approvedId(slug: string): Promise<number> {
    const library = await this.libraries.findBySlug(slug, null);
    if (!library || library.status !== 'approved') throw new NotFoundError();
    return library.id;
  }
}
