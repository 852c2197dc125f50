/**
 * POST /{slug}/check when the query fails (5xx three times, timeout, malformed answer, long Retry-After, dropped
 * sockets): a sanitized error is recorded and the confirm is blocked; a check older than
 * MAPDB_DUPLICATE_CHECK_MAX_AGE_SECONDS (here 600) is stale. Split from duplicate-check.e2e-spec.ts.
 */
import { loginUser } from '../support/auth.js';
import { adminGet, adminPost, checkPasses, codes, contributionRow, eventRows } from './helpers.js';
import { MAX_AGE_SECONDS, duplicateCheckSuite } from './duplicate-check-support.js';

describe('map contribution duplicate check failures', () => {
  const { suite, library, check } = duplicateCheckSuite();
  const { fake, db, t, staff } = suite;

  describe('failed checks block', () => {
    const SECRET_BODY = 'upstream-secret-body-9921';

    /** A passed check first, so the failure shows on a record that was eligible. */
    const failedCheck = async (script: () => void, code: string, queries: number) => {
      const lib = await library();
      await checkPasses(t.http, staff, lib.slug);
      const checkedAt = (await contributionRow(db.url, lib.id))?.checked_at;
      fake.reset();
      script();
      const body = await check(lib);
      expect(fake.requestsTo('query')).toHaveLength(queries);
      expect(body).toMatchObject({
        status: 'no_match',
        eligible: false,
        last_error_code: code,
      });
      expect(codes(body)).toEqual(['check_failed']);
      expect(body.last_error_message).not.toMatch(/127\.0\.0\.1|http:|interpreter/);
      expect(body.last_error_message).not.toContain(SECRET_BODY);
      const row = await contributionRow(db.url, lib.id);
      expect(row).toMatchObject({ last_check_failed: true, last_error_code: code });
      expect(row?.checked_at).toEqual(checkedAt);
      expect(body.events.at(-1)).toMatchObject({
        type: 'duplicate_check',
        outcome: 'failed',
        details: { error_code: code },
      });
      expect(JSON.stringify(await eventRows(db.url, lib.id))).not.toContain(SECRET_BODY);

      // The confirmation reruns the check, which fails the same way: refused, nothing written.
      fake.reset();
      script();
      const confirm = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {});
      expect([confirm.status, confirm.body]).toEqual([
        409,
        {
          message: expect.any(String),
          details: { blockers: [{ code: 'check_failed', message: expect.any(String) }] },
        },
      ]);
      expect(fake.requestsTo('query')).toHaveLength(queries);
      expect(fake.writeRequests).toEqual([]);
      expect(await contributionRow(db.url, lib.id)).toMatchObject({
        status: 'no_match',
        last_check_failed: true,
        last_error_code: code,
      });
      return lib;
    };

    it('5xx three times (three attempts, then check_failed)', async () => {
      await failedCheck(
        () => fake.script('query', { kind: 'status', status: 503, body: SECRET_BODY }, 3),
        'check_http_503',
        3,
      );
    });

    it('a timeout on the last attempt', async () => {
      await failedCheck(
        () => {
          fake.script('query', { kind: 'status', status: 502, body: SECRET_BODY }, 2);
          fake.script('query', { kind: 'hang' });
        },
        'check_timeout',
        3,
      );
    }, 60_000);

    it('a malformed answer (not retried)', async () => {
      await failedCheck(
        () => fake.script('query', { kind: 'malformed', body: `<html>${SECRET_BODY}</html>` }),
        'check_malformed_response',
        1,
      );
    });

    it('429 with a Retry-After longer than the client waits (not retried)', async () => {
      await failedCheck(
        () => fake.script('query', { kind: 'rate_limited', retryAfter: '3600' }),
        'check_rate_limited',
        1,
      );
    });

    it('the connection dropped on every attempt', async () => {
      await failedCheck(() => fake.script('query', { kind: 'close' }, 3), 'check_network_error', 3);
    });

    it('a check that passes again clears the failure', async () => {
      const lib = await failedCheck(
        () => fake.script('query', { kind: 'malformed', body: '{"elements": "nope"}' }),
        'check_malformed_response',
        1,
      );
      fake.reset();
      const body = await check(lib);
      expect([body.eligible, body.last_error_code, body.last_error_message]).toEqual([
        true,
        '',
        '',
      ]);
      expect((await contributionRow(db.url, lib.id))?.last_check_failed).toBe(false);
    });
  });

  describe('stale checks block', () => {
    it(`a check older than ${MAX_AGE_SECONDS} s is check_stale in detail, preview and the filter; confirm reruns it`, async () => {
      const lib = await library();
      await checkPasses(t.http, staff, lib.slug);

      // Access tokens live 5 minutes on the same clock: sign in again after moving it.
      const signIn = async () =>
        (staff.access = (await loginUser(t.http, staff.username, staff.password)).access);
      t.clock.advance(MAX_AGE_SECONDS * 1000);
      await signIn();
      expect(codes((await adminGet(t.http, staff.access, `/${lib.slug}`)).body)).toEqual([]);

      t.clock.advance(1000);
      await signIn();
      const detail = await adminGet(t.http, staff.access, `/${lib.slug}`);
      expect([detail.body.eligible, codes(detail.body)]).toEqual([false, ['check_stale']]);
      const preview = await adminGet(t.http, staff.access, `/${lib.slug}/preview`);
      expect([preview.status, codes(preview.body.details)]).toEqual([409, ['check_stale']]);
      const eligible = await adminGet(t.http, staff.access, '/?eligible=true&page_size=50');
      expect(
        eligible.body.items.map((i: { library: { slug: string } }) => i.library.slug),
      ).not.toContain(lib.slug);

      // The confirmation always reruns the check; a fresh pass lets it through.
      fake.reset();
      const confirm = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {});
      expect([confirm.status, confirm.body.status]).toEqual([200, 'contributed']);
      expect(fake.requestsTo('query')).toHaveLength(1);
      expect(confirm.body.checked_at).toBe(t.clock.date().toISOString());
    });
  });
});
