import type { ModerationLibraryResponse } from '../moderation/dto/moderation.dto.js';

export interface DiffRow {
  field: string;
  current: string;
  proposed: string;
  /** Photo fields show pictures rather than their paths. */
  isPhoto: boolean;
}

const show = (value: unknown): string => {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
};

/** The owner's staged edit against the live values, one row per staged field (unchanged fields are left out). */
export function stagedDiff(library: ModerationLibraryResponse): DiffRow[] {
  const staged = library.pending_changes;
  if (!staged) return [];
  const live = library as unknown as Record<string, unknown>;
  return Object.entries(staged)
    .filter(([field]) => field !== 'thumbnail_url')
    .map(([field, proposed]) => ({
      field,
      current: show(live[field]),
      proposed: show(proposed),
      isPhoto: field === 'photo_url',
    }))
    .filter((row) => row.isPhoto || row.current !== row.proposed)
    .sort((a, b) => a.field.localeCompare(b.field));
}
