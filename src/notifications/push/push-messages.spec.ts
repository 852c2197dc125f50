import { maskEmail } from '../notification.queue.js';
import { jobUuid } from '../notifications.worker.js';
import { pushPayload, pushText } from './push-messages.js';

describe('push payloads', () => {
  it.each([
    [
      'library_approved',
      { name: 'Lesekiste', slug: 'lesekiste' },
      { title: 'Bookcase published', body: '"Lesekiste" is now on the map. Thank you!' },
    ],
    [
      'library_rejected',
      { name: 'Lesekiste', reason: 'No photo of the bookcase.' },
      {
        title: 'Bookcase not published',
        body: '"Lesekiste" was not published: No photo of the bookcase.',
      },
    ],
    [
      'library_rejected',
      { name: 'Lesekiste', reason: '' },
      { title: 'Bookcase not published', body: '"Lesekiste" was not published.' },
    ],
    [
      'photo_approved',
      { name: 'A' },
      { title: 'Photo published', body: 'Your photo of "A" is now shown.' },
    ],
    [
      'photo_rejected',
      { name: 'A' },
      { title: 'Photo not accepted', body: 'Your photo of "A" was not accepted.' },
    ],
    [
      'moderation_work',
      { pending: 1 },
      { title: 'Moderation', body: '1 item is waiting for moderation.' },
    ],
    [
      'moderation_work',
      { pending: 12 },
      { title: 'Moderation', body: '12 items are waiting for moderation.' },
    ],
  ] as const)('%s %j', (kind, data, expected) => {
    expect(pushText(kind, data)).toEqual(expected);
  });

  it('clips long names and reasons so the payload stays small', () => {
    const text = pushText('library_rejected', { name: 'n'.repeat(300), reason: 'r'.repeat(3000) });
    expect(text.body.length).toBeLessThanOrEqual(230);
    expect(text.body).toContain(`"${'n'.repeat(79)}…"`);
  });

  it('carries only the alert and routing keys', () => {
    expect(
      pushPayload('photo_approved', {
        name: 'A',
        slug: 'a',
        photo_id: 7,
        library_id: 3,
        email: 'x@example.org',
      }),
    ).toEqual({
      aps: {
        alert: { title: 'Photo published', body: 'Your photo of "A" is now shown.' },
        sound: 'default',
        'thread-id': 'submissions',
      },
      kind: 'photo_approved',
      library_slug: 'a',
      photo_id: 7,
    });
  });

  it('refuses kinds without a push', () => {
    expect(() => pushText('password_reset', {})).toThrow('no push text for password_reset');
  });
});

describe('maskEmail', () => {
  it.each([
    ['jane.doe@example.org', 'j•••@example.org'],
    ['x@example.org', 'x•••@example.org'],
    ['broken', '•••'],
  ])('%s → %s', (email, masked) => expect(maskEmail(email)).toBe(masked));
});

describe('jobUuid', () => {
  it('is a stable UUID per job, different between jobs', () => {
    expect(jobUuid(42)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(jobUuid(42)).toBe(jobUuid(42));
    expect(jobUuid(43)).not.toBe(jobUuid(42));
  });
});
