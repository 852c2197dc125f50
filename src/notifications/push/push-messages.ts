import type { NotificationKind } from '../notification-kinds.js';

export interface PushText {
  title: string;
  body: string;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * The alert of each push. Public facts only (library name and slug, the moderators' reason, counts): never an
 * email address, a username or a contact.
 */
const textOf = (value: unknown): string =>
  typeof value === 'string' || typeof value === 'number' ? String(value) : '';

export function pushText(kind: NotificationKind, data: Record<string, unknown>): PushText {
  const name = clip(textOf(data.name), 80);
  switch (kind) {
    case 'library_approved':
      return { title: 'Bookcase published', body: `"${name}" is now on the map. Thank you!` };
    case 'library_rejected':
      return {
        title: 'Bookcase not published',
        body: clip(
          data.reason
            ? `"${name}" was not published: ${textOf(data.reason)}`
            : `"${name}" was not published.`,
          230,
        ),
      };
    case 'photo_approved':
      return { title: 'Photo published', body: `Your photo of "${name}" is now shown.` };
    case 'photo_rejected':
      return { title: 'Photo not accepted', body: `Your photo of "${name}" was not accepted.` };
    case 'moderation_work': {
      const count = Number(data.pending ?? 0);
      return {
        title: 'Moderation',
        body:
          count === 1
            ? '1 item is waiting for moderation.'
            : `${count} items are waiting for moderation.`,
      };
    }
    default:
      throw new Error(`no push text for ${kind}`);
  }
}

/** The APNs body: the alert plus the keys the app routes on (kind, library slug, photo id). */
export function pushPayload(
  kind: NotificationKind,
  data: Record<string, unknown>,
): Record<string, unknown> {
  const text = pushText(kind, data);
  return {
    aps: {
      alert: text,
      sound: 'default',
      'thread-id': kind === 'moderation_work' ? 'moderation' : 'submissions',
    },
    kind,
    ...(typeof data.slug === 'string' ? { library_slug: data.slug } : {}),
    ...(typeof data.photo_id === 'number' ? { photo_id: data.photo_id } : {}),
  };
}
