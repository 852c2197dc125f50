/** The value types of a library row (the row itself is `LibraryRow` in library.row.ts). */

export type LibraryStatus = 'pending' | 'approved' | 'rejected';
export type SubmissionOrigin = 'legacy' | 'user' | 'staff' | 'import';
export type Wheelchair = '' | 'yes' | 'no' | 'limited';

/** A staged photo awaiting moderation (approved libraries only). */
export interface PendingPhoto {
  photo_key: string;
  thumbnail_key: string;
}
