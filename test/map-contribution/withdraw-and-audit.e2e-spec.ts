/**
 * POST /{slug}/withdraw (true → false only, actor recorded), the append-only event history (the database refuses
 * UPDATE, DELETE and TRUNCATE), and a full run — failed check, check, resolve, preview, an ambiguous confirm,
 * reconcile, a 401 — after which no secret or private value appears in any contribution record, event, write state,
 * outgoing map request or log line.
 */
import request from 'supertest';
import { bearer } from '../support/auth.js';
import { TEST_JWT_SECRET } from '../support/app.js';
import { libraryRow } from '../support/libraries.js';
import {
  DEG_PER_M,
  MAP_TOKEN,
  adminGet,
  adminPost,
  captureLogs,
  checkPasses,
  codes,
  contributionRow,
  eventRows,
  sql,
  submitLibrary,
  mapSuite,
} from './helpers.js';

const PERMISSION = 'mapdb_submission_allowed';

describe('map contribution withdrawal and audit', () => {
  const logs = captureLogs();
  const { fake, db, t, staff, owner } = mapSuite({
    logDestination: logs.stream,
    owner: { username: 'private_owner_4411', email: 'owner.private.4411@example.org' },
    resetFake: true,
  });

  describe('withdraw', () => {
    it('true → false: the permission and its time are cleared, the actor is recorded, the library is ineligible', async () => {
      const lib = await submitLibrary(t.http, owner, staff);
      await checkPasses(t.http, staff, lib.slug);
      expect((await adminGet(t.http, staff.access, `/${lib.slug}`)).body.eligible).toBe(true);

      const res = await adminPost(t.http, staff.access, `/${lib.slug}/withdraw`);
      expect(res.status).toBe(200);
      expect(res.body.library[PERMISSION]).toBe(false);
      expect([res.body.eligible, codes(res.body)]).toEqual([false, ['permission_missing']]);
      expect(res.body.status).toBe('no_match');
      expect(res.body.events.at(-1)).toEqual({
        type: 'permission_withdrawal',
        outcome: 'withdrawn',
        actor: { id: staff.id, username: staff.username },
        attempt_key: null,
        details: {},
        created_at: expect.any(String),
      });
      const row = await libraryRow(db.url, lib.id);
      expect([row?.[PERMISSION], row?.[`${PERMISSION}_at`]]).toEqual([false, null]);
      expect((await eventRows(db.url, lib.id)).at(-1)).toMatchObject({
        event_type: 'permission_withdrawal',
        actor_id: staff.id,
        actor_username: staff.username,
      });

      const mine = await request(t.http)
        .get('/api/v1/libraries/mine')
        .set('Authorization', bearer(owner.access));
      const item = mine.body.items.find((i: { slug: string }) => i.slug === lib.slug);
      expect(item[PERMISSION]).toBe(false);
      const listed = await adminGet(t.http, staff.access, '/?eligible=true');
      expect(
        listed.body.items.map((i: { library: { slug: string } }) => i.library.slug),
      ).not.toContain(lib.slug);
      const confirm = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {});
      expect(confirm.status).toBe(409);
      expect(codes(confirm.body.details)).toEqual(['permission_missing']);
      expect(fake.writeRequests).toEqual([]);
    });

    it('false → 400, nothing recorded (already withdrawn, or never given)', async () => {
      const message = {
        message: 'The map submission permission is already withdrawn (or was never given).',
        details: null,
      };
      const lib = await submitLibrary(t.http, owner, staff);
      expect((await adminPost(t.http, staff.access, `/${lib.slug}/withdraw`)).status).toBe(200);
      const events = await eventRows(db.url, lib.id);
      const again = await adminPost(t.http, staff.access, `/${lib.slug}/withdraw`);
      expect([again.status, again.body]).toEqual([400, message]);
      expect(await eventRows(db.url, lib.id)).toEqual(events);

      const never = await submitLibrary(t.http, owner, staff, { [PERMISSION]: false });
      const res = await adminPost(t.http, staff.access, `/${never.slug}/withdraw`);
      expect([res.status, res.body]).toEqual([400, message]);
      expect(await contributionRow(db.url, never.id)).toBeUndefined();
      expect(await eventRows(db.url, never.id)).toEqual([]);
    });

    it('after a contribution it withdraws the permission but leaves the record contributed', async () => {
      const lib = await submitLibrary(t.http, owner, staff);
      await checkPasses(t.http, staff, lib.slug);
      expect((await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {})).body.status).toBe(
        'contributed',
      );
      const res = await adminPost(t.http, staff.access, `/${lib.slug}/withdraw`);
      expect([res.status, res.body.status, res.body.library[PERMISSION]]).toEqual([
        200,
        'contributed',
        false,
      ]);
    });
  });

  describe('the event history is append-only', () => {
    it('refuses UPDATE, DELETE and TRUNCATE in the database', async () => {
      const lib = await submitLibrary(t.http, owner, staff);
      await checkPasses(t.http, staff, lib.slug);
      const before = await eventRows(db.url, lib.id);
      expect(before).toHaveLength(1);
      await expect(
        sql(
          db.url,
          "UPDATE map_contribution_events SET outcome = 'tampered' WHERE library_id = $1",
          [lib.id],
        ),
      ).rejects.toThrow(/append-only/);
      await expect(
        sql(db.url, "UPDATE map_contribution_events SET details = '{}'::jsonb"),
      ).rejects.toThrow(/append-only/);
      await expect(
        sql(db.url, 'DELETE FROM map_contribution_events WHERE library_id = $1', [lib.id]),
      ).rejects.toThrow(/append-only/);
      await expect(sql(db.url, 'TRUNCATE map_contribution_events')).rejects.toThrow(/append-only/);
      expect(await eventRows(db.url, lib.id)).toEqual(before);
    });
  });

  describe('secrets and private data', () => {
    const CONTACT = 'PRIVATE-CONTACT kiosk.keeper@example.net +49 170 5550123';
    const DESCRIPTION = 'PRIVATE-DESCRIPTION the key hangs behind the bakery counter';
    const UPSTREAM_SECRET = 'upstream-body-secret-7781';

    it('never reach records, events, write state, map requests or logs after a full run', async () => {
      const fields = {
        name: 'Lesekiste Lindenweg',
        description: DESCRIPTION,
        contact: CONTACT,
        address: 'Lindenweg 12',
        operator: 'Bürgerverein Altstadt',
      };
      const lib = await submitLibrary(t.http, owner, staff, fields);
      const other = await submitLibrary(t.http, owner, staff, fields);
      const near = {
        type: 'node' as const,
        id: 9001,
        lat: lib.lat + 10 * DEG_PER_M,
        lon: lib.lng,
        tags: {
          amenity: 'public_bookcase',
          'contact:email': 'someone.else@example.net',
          phone: '+49 761 1234',
          description: UPSTREAM_SECRET,
        },
      };

      // A failed check, then a possible duplicate resolved as different, then a passing check.
      fake.script('query', { kind: 'malformed', body: UPSTREAM_SECRET });
      expect(
        (await adminPost(t.http, staff.access, `/${lib.slug}/check`)).body.last_error_code,
      ).toBe('check_malformed_response');
      fake.seedQuery(near);
      expect((await adminPost(t.http, staff.access, `/${lib.slug}/check`)).body.status).toBe(
        'possible_duplicate',
      );
      const resolve = await adminPost(t.http, staff.access, `/${lib.slug}/resolve`, {
        outcome: 'different_feature',
        element_type: 'node',
        element_id: 9001,
        reason: 'Node 9001 is the school shelf.',
      });
      expect(resolve.status).toBe(200);
      await checkPasses(t.http, staff, lib.slug);
      const preview = await adminGet(
        t.http,
        staff.access,
        `/${lib.slug}/preview?verified_name=true&verified_operator=true`,
      );
      expect(preview.body.eligible).toBe(true);

      // An ambiguous node create, then reconciliation.
      fake.script('node.create', { kind: 'write_then_drop' });
      const failed = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {
        verified_name: true,
        verified_operator: true,
      });
      expect(failed.body.status).toBe('failed');
      const reconciled = await adminPost(t.http, staff.access, `/${lib.slug}/reconcile`);
      expect(reconciled.body.status).toBe('contributed');

      // A 401 that disables writes, on the other library; and a withdrawal.
      await checkPasses(t.http, staff, other.slug);
      fake.script('changeset.create', { kind: 'status', status: 401, body: UPSTREAM_SECRET });
      expect(
        (await adminPost(t.http, staff.access, `/${other.slug}/confirm`, {})).body.last_error_code,
      ).toBe('write_unauthorized');
      expect((await adminPost(t.http, staff.access, `/${other.slug}/withdraw`)).status).toBe(200);

      const secrets = [
        MAP_TOKEN,
        owner.email,
        owner.password,
        owner.access,
        owner.refresh,
        staff.access,
        staff.password,
        TEST_JWT_SECRET,
        CONTACT,
        'PRIVATE-CONTACT',
        'kiosk.keeper',
        DESCRIPTION,
        'PRIVATE-DESCRIPTION',
        String(lib.body.photo_url),
        String(lib.body.thumbnail_url),
        String(other.body.photo_url),
        UPSTREAM_SECRET,
        'someone.else@example.net',
        '+49 761 1234',
      ];
      expect(lib.body.photo_url).toMatch(/^\/media\//);

      const stored = await sql(
        db.url,
        `SELECT (SELECT coalesce(json_agg(to_jsonb(c)), '[]') FROM map_contributions c)::text AS records,
                (SELECT coalesce(json_agg(to_jsonb(e)), '[]') FROM map_contribution_events e)::text AS events,
                (SELECT coalesce(json_agg(to_jsonb(w)), '[]') FROM map_write_state w)::text AS state`,
      );
      const { records, events, state } = stored.rows[0] as Record<string, string>;
      expect(JSON.parse(records).length).toBeGreaterThanOrEqual(2);
      expect(JSON.parse(events).length).toBeGreaterThanOrEqual(12);
      expect(JSON.parse(state)).toHaveLength(1);

      const logText = logs.lines.join('');
      expect(logText).toContain(`/api/v1/admin/map-contributions/${lib.slug}/confirm`);
      expect(fake.requests.length).toBeGreaterThanOrEqual(12);
      const mapRequests = fake.requests
        .map((req) => JSON.stringify({ path: req.path, headers: req.headers, body: req.body }))
        .join('\n');

      for (const secret of secrets) {
        for (const [where, text] of Object.entries({
          records,
          events,
          state,
          logText,
          mapRequests,
        })) {
          expect([secret, where, text.includes(secret)]).toEqual([secret, where, false]);
        }
      }
      // The photo file names and the owner's account never reach the records either.
      for (const text of [records, events]) {
        expect(text).not.toContain(owner.username);
        expect(text).not.toMatch(/\.jpg/);
      }
    });
  });
});
