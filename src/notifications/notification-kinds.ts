/** What a queued message is about; each kind has a mail template, a push text, or both. */
export const NOTIFICATION_KINDS = [
  'password_reset',
  'password_changed',
  'email_changed',
  'library_approved',
  'library_rejected',
  'photo_approved',
  'photo_rejected',
  'moderation_work',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** Security notices go out whatever the user's email preference; the rest follow it. */
export const SECURITY_KINDS: readonly NotificationKind[] = [
  'password_reset',
  'password_changed',
  'email_changed',
];

export type Channel = 'email' | 'push';

/** Data a decision notice carries: public facts about the library, never contact data. */
export interface DecisionPayload {
  library_id: number;
  slug: string;
  name: string;
  reason?: string;
  photo_id?: number;
}
