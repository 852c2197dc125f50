import type { Point } from 'typeorm';
import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

export type LibraryStatus = 'pending' | 'approved' | 'rejected';
export type SubmissionOrigin = 'legacy' | 'user' | 'staff' | 'import';
export type Wheelchair = '' | 'yes' | 'no' | 'limited';

/** A staged photo awaiting moderation (approved libraries only). */
export interface PendingPhoto {
  photo_key: string;
  thumbnail_key: string;
}

/**
 * A public bookcase. Queries that search, filter by distance or page go through LibrariesRepository's SQL; the
 * entity serves simple loads and writes. `search_vector` / `search_text` are generated columns, not mapped.
 */
@Entity({ name: 'libraries' })
export class LibraryEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 255, unique: true })
  slug: string;

  @Column({ type: 'varchar', length: 255, default: '' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'varchar', length: 255, default: '' })
  address: string;

  @Column({ type: 'varchar', length: 100 })
  city: string;

  @Column({ type: 'char', length: 2 })
  country: string;

  @Column({ name: 'postal_code', type: 'varchar', length: 20, default: '' })
  postalCode: string;

  @Column({ name: 'wheelchair_accessible', type: 'varchar', length: 7, default: '' })
  wheelchairAccessible: Wheelchair;

  @Column({ type: 'integer', nullable: true })
  capacity: number | null;

  @Column({ name: 'is_indoor', type: 'boolean', nullable: true })
  isIndoor: boolean | null;

  @Column({ name: 'is_lit', type: 'boolean', nullable: true })
  isLit: boolean | null;

  @Column({ type: 'varchar', length: 500, default: '' })
  website: string;

  @Column({ type: 'varchar', length: 255, default: '' })
  contact: string;

  @Column({ type: 'varchar', length: 255, default: '' })
  operator: string;

  @Column({ type: 'varchar', length: 255, default: '' })
  brand: string;

  @Column({ type: 'varchar', length: 100, default: '' })
  source: string;

  @Column({ name: 'external_id', type: 'varchar', length: 255, default: '' })
  externalId: string;

  @Column({ name: 'photo_key', type: 'varchar', length: 255, nullable: true })
  photoKey: string | null;

  @Column({ name: 'thumbnail_key', type: 'varchar', length: 255, nullable: true })
  thumbnailKey: string | null;

  @Column({ type: 'geography', spatialFeatureType: 'Point', srid: 4326 })
  location: Point;

  @Column({ type: 'varchar', length: 8, default: 'pending' })
  status: LibraryStatus;

  @Column({ name: 'rejection_reason', type: 'text', default: '' })
  rejectionReason: string;

  @Column({ name: 'mapdb_submission_allowed', type: 'boolean', default: false })
  mapdbSubmissionAllowed: boolean;

  @Column({ name: 'mapdb_submission_allowed_at', type: 'timestamptz', nullable: true })
  mapdbSubmissionAllowedAt: Date | null;

  @Column({ name: 'submission_origin', type: 'varchar', length: 6, default: 'legacy' })
  submissionOrigin: SubmissionOrigin;

  @Column({ name: 'created_by', type: 'integer', nullable: true })
  createdBy: number | null;

  @Column({ name: 'pending_changes', type: 'jsonb', nullable: true })
  pendingChanges: Record<string, unknown> | null;

  @Column({ name: 'pending_photo', type: 'jsonb', nullable: true })
  pendingPhoto: PendingPhoto | null;

  /** Which text fields (`name`, `description`) AI enrichment filled in. */
  @Column({ name: 'ai_generated_fields', type: 'text', array: true, default: () => "'{}'" })
  aiGeneratedFields: string[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
