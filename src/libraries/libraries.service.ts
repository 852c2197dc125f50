import { Injectable, Logger } from '@nestjs/common';
import type { AuthUser } from '../common/auth/auth-user.js';
import { Clock } from '../common/clock.js';
import { InvalidFieldsError, NotFoundError, RefusedError } from '../common/errors/domain-errors.js';
import { IdempotencyService } from '../common/idempotency/idempotency.service.js';
import { PhotoStore, type UploadedPhoto } from '../common/media/photo-store.js';
import { paginate, type Page, type PaginationQueryDto } from '../common/pagination/pagination.js';
import type { Transaction } from '../database/database.js';
import { readAfterCommit } from '../database/transaction.js';
import { EnrichmentQueue } from '../enrichment/enrichment.queue.js';
import type { CreateLibraryDto } from './dto/create-library.dto.js';
import type {
  CountryListResponse,
  CreatedLibraryResponse,
  LatestLibrariesResponse,
  LibraryDetailResponse,
  LibraryItemResponse,
  MyLibraryResponse,
  OwnerLibraryResponse,
} from './dto/library.response.js';
import type { LatestLibrariesQueryDto, ListLibrariesQueryDto } from './dto/list-libraries.query.js';
import { PROTECTED_LIBRARY_FIELDS, type UpdateLibraryDto } from './dto/update-library.dto.js';
import type { PendingPhoto } from './library.entity.js';
import { LibraryMapper } from './library.mapper.js';
import type { LibraryRow, LibraryValues } from './library.row.js';
import { ApprovedListRepository } from './approved-list.repository.js';
import { LibrariesRepository } from './libraries.repository.js';
import type { LibrarySearch } from './list-query.js';
import { baseSlug } from './slug.js';
import { NotificationQueue } from '../notifications/notification.queue.js';

export type { UploadedPhoto } from '../common/media/photo-store.js';

export const EDITABLE_FIELDS: (keyof LibraryValues)[] = [
  'name',
  'description',
  'address',
  'city',
  'country',
  'postal_code',
  'wheelchair_accessible',
  'capacity',
  'is_indoor',
  'is_lit',
  'website',
  'contact',
  'operator',
  'brand',
  'latitude',
  'longitude',
];

@Injectable()
export class LibrariesService {
  private readonly logger = new Logger(LibrariesService.name);

  constructor(
    private readonly libraries: LibrariesRepository,
    private readonly approved: ApprovedListRepository,
    private readonly mapper: LibraryMapper,
    private readonly photos: PhotoStore,
    private readonly clock: Clock,
    private readonly enrichment: EnrichmentQueue,
    private readonly notifications: NotificationQueue,
    private readonly idempotency: IdempotencyService,
  ) {}

  async list(
    user: AuthUser | null,
    query: ListLibrariesQueryDto,
  ): Promise<Page<LibraryItemResponse>> {
    const search: LibrarySearch = {
      q: query.q || undefined,
      search: query.search || undefined,
      city: query.city || undefined,
      country: query.country || undefined,
      postalCode: query.postal_code || undefined,
      hasPhoto: query.has_photo,
      near:
        query.lat !== undefined && query.lng !== undefined
          ? {
              lat: query.lat,
              lng: query.lng,
              radiusMeters: query.radius_km === undefined ? undefined : query.radius_km * 1000,
            }
          : undefined,
    };
    const page = await this.approved.page(search, user?.id ?? null, query);
    return { items: page.items.map((row) => this.mapper.item(row)), pagination: page.pagination };
  }

  async latest(
    user: AuthUser | null,
    query: LatestLibrariesQueryDto,
  ): Promise<LatestLibrariesResponse> {
    const rows = await this.approved.latest(query.limit, query.has_photo, user?.id ?? null);
    return { items: rows.map((row) => this.mapper.item(row)) };
  }

  async countries(): Promise<CountryListResponse> {
    const rows = await this.approved.countByCountry();
    return { items: rows.map((row) => this.mapper.country(row)) };
  }

  /** Approved libraries for everyone; a pending or rejected one also for its submitter; anything else is 404. */
  async detail(user: AuthUser | null, slug: string): Promise<LibraryDetailResponse> {
    const row = await this.libraries.findBySlug(slug, user?.id ?? null);
    if (!row || !this.visibleTo(row, user)) throw new NotFoundError();
    const photos = await this.libraries.findApprovedPhotos(row.id);
    return this.mapper.detail(row, photos);
  }

  mine(user: AuthUser, query: PaginationQueryDto): Promise<Page<MyLibraryResponse>> {
    return paginate(
      query,
      () => this.libraries.countByCreator(user.id),
      async (limit, offset) =>
        (await this.libraries.findByCreator(user.id, limit, offset)).map((row) =>
          this.mapper.mine(row),
        ),
    );
  }

  /**
   * A submission. With an `Idempotency-Key`, a retry of the same request answers the original result (the key is
   * recorded in the row's transaction), the same key with another request 409. The answer is read inside the
   * transaction, so nothing after the COMMIT can fail a saved submission.
   */
  async create(
    user: AuthUser,
    dto: CreateLibraryDto,
    file: UploadedPhoto | undefined,
    idempotencyKey: string | null = null,
  ): Promise<CreatedLibraryResponse> {
    if (!file)
      throw InvalidFieldsError.single(['file', 'photo'], 'A photo is required.', 'missing');
    const request = await this.idempotency.identify(
      user.id,
      idempotencyKey,
      'libraries.create',
      dto,
      file.path,
    );
    const earlier = await this.idempotency.replay(request);
    if (earlier) return earlier.body as CreatedLibraryResponse;
    const keys = await this.photos.store(file, 'libraries');
    const allowed = dto.mapdb_submission_allowed === true;
    return this.idempotency.run(request, () =>
      this.photos.withFiles(keys, () =>
        this.libraries.transaction(async (tx) => {
          const values = this.valuesFrom(dto);
          const libraryId = await this.libraries.insert(tx, {
            ...values,
            slugBase: baseSlug({ city: values.city, address: values.address, name: values.name }),
            status: 'pending',
            origin: 'user',
            createdBy: user.id,
            source: '',
            externalId: '',
            // The permission is recorded only here, after authentication and validation succeeded.
            mapdbSubmissionAllowed: allowed,
            mapdbSubmissionAllowedAt: allowed ? this.clock.date() : null,
            photoKey: keys.photo_key,
            thumbnailKey: keys.thumbnail_key,
          });
          if (!values.name || !values.description) await this.enrichment.enqueue(tx, libraryId);
          await this.notifications.moderationWork(tx, user.id);
          const body = this.mapper.created(
            (await this.libraries.findById(libraryId, user.id, tx))!,
          );
          await this.idempotency.record(tx, request, libraryId, 201, body);
          return body;
        }),
      ),
    );
  }

  /**
   * Owner edit. Pending: changed in place. Approved: staged in pending_changes / pending_photo for moderation,
   * the published values untouched. Rejected or someone else's: 404.
   */
  async update(
    user: AuthUser,
    slug: string,
    rawBody: Record<string, unknown>,
    dto: UpdateLibraryDto,
    file: UploadedPhoto | undefined,
  ): Promise<OwnerLibraryResponse> {
    const existing = await this.libraries.findBySlug(slug, user.id);
    if (!existing || existing.created_by !== user.id || existing.status === 'rejected')
      throw new NotFoundError();
    const changes = this.editChanges(rawBody, dto, PROTECTED_LIBRARY_FIELDS);
    if (Object.keys(changes).length === 0 && !file)
      throw new RefusedError('Provide at least one field to update.');

    const keys = file ? await this.photos.store(file, 'libraries') : null;
    const replaced = await this.photos.withFiles(keys, () =>
      this.libraries.transaction(async (tx) => {
        const row = await this.libraries.findBySlug(slug, user.id, tx, true);
        if (!row || row.created_by !== user.id || row.status === 'rejected')
          throw new NotFoundError();
        return this.applyEdit(tx, row, changes, keys);
      }),
    );
    if (replaced) await this.discardReplacedPhoto(replaced);
    const updated = await readAfterCommit(() => this.libraries.findBySlug(slug, user.id));
    return this.mapper.owner(updated!);
  }

  /** Returns the photo files the edit made obsolete (deleted after commit). */
  private async applyEdit(
    tx: Transaction,
    row: LibraryRow,
    changes: Partial<LibraryValues>,
    photo: PendingPhoto | null,
  ): Promise<PendingPhoto | null> {
    if (row.status === 'pending') {
      const aiFields = row.ai_generated_fields.filter((field) => !(field in changes));
      await this.libraries.updateValues(tx, row.id, changes, photo, aiFields);
      return photo && row.photo_key && row.thumbnail_key
        ? { photo_key: row.photo_key, thumbnail_key: row.thumbnail_key }
        : null;
    }
    const staged = { ...(row.pending_changes ?? {}), ...changes };
    await this.notifications.moderationWork(tx, row.created_by);
    await this.libraries.stageChanges(
      tx,
      row.id,
      Object.keys(staged).length ? staged : null,
      photo ?? row.pending_photo,
    );
    return photo ? row.pending_photo : null;
  }

  private visibleTo(row: LibraryRow, user: AuthUser | null): boolean {
    if (row.status === 'approved') return true;
    return (
      (row.status === 'pending' || row.status === 'rejected') &&
      user !== null &&
      row.created_by === user.id
    );
  }

  private valuesFrom(dto: CreateLibraryDto): LibraryValues {
    return {
      name: dto.name ?? '',
      description: dto.description ?? '',
      address: dto.address ?? '',
      city: dto.city,
      country: dto.country.toUpperCase(),
      postal_code: dto.postal_code ?? '',
      wheelchair_accessible: dto.wheelchair_accessible ?? '',
      capacity: dto.capacity ?? null,
      is_indoor: dto.is_indoor ?? null,
      is_lit: dto.is_lit ?? null,
      website: dto.website ?? '',
      contact: dto.contact ?? '',
      operator: dto.operator ?? '',
      brand: dto.brand ?? '',
      latitude: dto.latitude,
      longitude: dto.longitude,
    };
  }

  /**
   * The rules every edit (owner's or staff's) shares: a protected field is 400 `Unsupported field: <name>.`,
   * latitude and longitude come together. Returns the submission fields the edit sets.
   */
  editChanges(
    rawBody: Record<string, unknown>,
    dto: UpdateLibraryDto,
    protectedFields: readonly string[],
  ): Partial<LibraryValues> {
    const protectedField = protectedFields.find((field) => Object.hasOwn(rawBody, field));
    if (protectedField) throw new RefusedError(`Unsupported field: ${protectedField}.`);
    if ((dto.latitude === undefined) !== (dto.longitude === undefined)) {
      throw new RefusedError('Latitude and longitude must be provided together.');
    }
    return this.changesFrom(dto);
  }

  private changesFrom(dto: UpdateLibraryDto): Partial<LibraryValues> {
    const changes: Partial<LibraryValues> = {};
    for (const field of EDITABLE_FIELDS) {
      const value = (dto as Record<string, unknown>)[field];
      if (value !== undefined)
        (changes as Record<string, unknown>)[field] =
          field === 'country' && typeof value === 'string' ? value.toUpperCase() : value;
    }
    return changes;
  }

  /**
   * After a commit: deletes the files of a photo an edit replaced, unless a community photo still uses them (a
   * promoted primary). Never fails the request that committed: files it cannot judge now are left to the sweep.
   */
  async discardReplacedPhoto(photo: PendingPhoto): Promise<void> {
    try {
      if (await this.libraries.isCommunityPhotoKey(photo.photo_key)) return;
    } catch (error) {
      this.logger.warn(
        `left replaced photo ${photo.photo_key} to the sweep: ${(error as Error).message}`,
      );
      return;
    }
    await this.photos.discard(photo);
  }
}
