import type { MigrationInterface, QueryRunner } from 'typeorm';

const INDEXES: [name: string, definition: string][] = [
  ['libraries_photo_key_idx', 'libraries (photo_key) WHERE photo_key IS NOT NULL'],
  ['libraries_thumbnail_key_idx', 'libraries (thumbnail_key) WHERE thumbnail_key IS NOT NULL'],
  [
    'libraries_pending_photo_key_idx',
    "libraries ((pending_photo->>'photo_key')) WHERE pending_photo IS NOT NULL",
  ],
  [
    'libraries_pending_thumbnail_key_idx',
    "libraries ((pending_photo->>'thumbnail_key')) WHERE pending_photo IS NOT NULL",
  ],
  ['library_photos_photo_key_idx', 'library_photos (photo_key)'],
  ['library_photos_thumbnail_key_idx', 'library_photos (thumbnail_key)'],
  ['reports_photo_key_idx', 'reports (photo_key) WHERE photo_key IS NOT NULL'],
  ['reports_thumbnail_key_idx', 'reports (thumbnail_key) WHERE thumbnail_key IS NOT NULL'],
];

/**
 * The orphan media sweep asks, for a batch of stored files, which ones a row still references
 * (MediaReferencesRepository.findReferenced): one index per column that can hold a media key.
 */
export class MediaReferences1764400000000 implements MigrationInterface {
  name = 'MediaReferences1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const [name, definition] of INDEXES) {
      await queryRunner.query(`CREATE INDEX ${name} ON ${definition}`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const [name] of INDEXES) await queryRunner.query(`DROP INDEX ${name}`);
  }
}
