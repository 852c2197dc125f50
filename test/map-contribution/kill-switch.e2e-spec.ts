/**
 * The kill switch: writes need MAPDB_WRITE_ENABLED, all six launch gates, a plan URL, allow_write_api confirmed
 * through GET /api/0.6/permissions, and no 401 recorded for the current token. With any of them missing a confirm
 * is 409 writes_disabled and the fake map server sees ZERO write requests. A 401 from the map API disables writes
 * (persisted: a restarted app stays disabled) until the token changes.
 */
import { loginUser } from '../support/auth.js';
import type { TestApp } from '../support/app.js';
import {
  ALL_GATES,
  MAP_TOKEN,
  adminGet,
  adminPost,
  checkPasses,
  codes,
  contributionRow,
  eventRows,
  submitLibrary,
  writeEnv,
  type SubmittedLibrary,
  mapSuite,
  refusal,
} from './helpers.js';

describe('map contribution kill switch', () => {
  /** Users and libraries are made through the suite's fully enabled app (`base`); each test runs its own app too. */
  const { fake, db, t: base, staff, owner, startApp } = mapSuite();

  beforeEach(() => {
    fake.reset();
    fake.token = MAP_TOKEN;
    fake.permissions = ['allow_read_prefs', 'allow_write_api'];
  });

  const app = (env: Record<string, string>) => startApp({ env });

  /** Submitted, approved, and checked through `through` (the check is read-only, allowed with writes off). */
  const checkedLibrary = async (through: TestApp) => {
    const lib = await submitLibrary(base.http, owner, staff);
    await checkPasses(through.http, staff, lib.slug);
    return lib;
  };

  const expectRefusedWithoutWrites = async (t: TestApp, lib: SubmittedLibrary) => {
    const [changesets, nodes] = [fake.changesets.size, fake.nodes.size];
    const detail = await adminGet(t.http, staff.access, `/${lib.slug}`);
    expect([detail.status, detail.body.eligible, codes(detail.body)]).toEqual([
      200,
      false,
      ['writes_disabled'],
    ]);
    const preview = await adminGet(t.http, staff.access, `/${lib.slug}/preview`);
    // Not previewable while writes are off: refused with the record's blockers, no tags rendered.
    expect([preview.status, codes(preview.body.details)]).toEqual([409, ['writes_disabled']]);
    expect(preview.body).not.toHaveProperty('node');
    const listed = await adminGet(t.http, staff.access, '/?eligible=true');
    expect(listed.body.items).toEqual([]);
    for (const body of [{}, { verified_name: true }]) {
      const confirm = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, body);
      expect([confirm.status, confirm.body]).toEqual([409, refusal('writes_disabled')]);
    }
    expect(fake.writeRequests).toEqual([]);
    expect([fake.changesets.size, fake.nodes.size]).toEqual([changesets, nodes]);
    expect((await contributionRow(db.url, lib.id))?.status).toBe('no_match');
    expect((await eventRows(db.url, lib.id)).map((e) => e.event_type)).not.toContain(
      'write_started',
    );
  };

  describe('configuration', () => {
    it('MAPDB_WRITE_ENABLED=false: 409 writes_disabled, zero write requests, permissions never asked', async () => {
      const t = await app(writeEnv(fake, { MAPDB_WRITE_ENABLED: 'false' }));
      const lib = await checkedLibrary(t);
      await expectRefusedWithoutWrites(t, lib);
      expect(fake.requestsTo('permissions')).toEqual([]);
    });

    it('writes off by default (nothing set but the query URL): same', async () => {
      const t = await app({
        RATE_LIMIT_ENABLED: 'false',
        MAPDB_QUERY_URL: fake.queryUrl,
        MAPDB_PLAN_URL: 'https://wiki.example.org/plan',
      });
      const lib = await checkedLibrary(t);
      await expectRefusedWithoutWrites(t, lib);
      expect(fake.requests.every((req) => req.endpoint === 'query')).toBe(true);
    });

    it.each(ALL_GATES.split(','))('launch gate %s missing: same', async (gate) => {
      const gates = ALL_GATES.split(',').filter((name) => name !== gate);
      const t = await app(writeEnv(fake, { MAPDB_LAUNCH_GATES: gates.join(',') }));
      await expectRefusedWithoutWrites(t, await checkedLibrary(t));
    });

    it('no launch gate at all: same', async () => {
      const env = writeEnv(fake);
      delete env.MAPDB_LAUNCH_GATES;
      const t = await app(env);
      await expectRefusedWithoutWrites(t, await checkedLibrary(t));
    });

    it('no MAPDB_PLAN_URL (changesets must name the plan): an app with writes on refuses to start', async () => {
      const env = writeEnv(fake);
      delete env.MAPDB_PLAN_URL;
      await expect(app(env)).rejects.toThrow(/MAPDB_PLAN_URL/);
      expect(fake.requests).toEqual([]);
    });

    it('allow_write_api missing from GET permissions: same, until the permission is granted', async () => {
      const token = 'read-only-token-3Hc8';
      fake.token = token;
      fake.permissions = ['allow_read_prefs'];
      const t = await app(writeEnv(fake, { MAPDB_OAUTH_ACCESS_TOKEN: token }));
      const lib = await checkedLibrary(t);
      await expectRefusedWithoutWrites(t, lib);
      expect(fake.requestsTo('permissions').length).toBeGreaterThan(0);

      fake.permissions = ['allow_read_prefs', 'allow_write_api'];
      const detail = await adminGet(t.http, staff.access, `/${lib.slug}`);
      expect([detail.body.eligible, detail.body.blockers]).toEqual([true, []]);
      const confirm = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {});
      expect([confirm.status, confirm.body.status]).toEqual([200, 'contributed']);
    });

    it('allow_write_api withdrawn later: the confirmation expires after an hour and the re-check closes writes', async () => {
      const token = 'hourly-token-6Tb2';
      fake.token = token;
      const t = await app(writeEnv(fake, { MAPDB_OAUTH_ACCESS_TOKEN: token }));
      const lib = await checkedLibrary(t);
      expect((await adminGet(t.http, staff.access, `/${lib.slug}`)).body.eligible).toBe(true);
      expect(fake.requestsTo('permissions')).toHaveLength(1);

      fake.permissions = ['allow_read_prefs'];
      t.clock.advance(59 * 60 * 1000);
      // Access tokens live 5 minutes on the app's clock: sign in again through it.
      const signedIn = await loginUser(t.http, staff.username, staff.password);
      // Within the hour the confirmation is trusted (only the duplicate check has gone stale).
      expect(codes((await adminGet(t.http, signedIn.access, `/${lib.slug}`)).body)).toEqual([
        'check_stale',
      ]);
      expect(fake.requestsTo('permissions')).toHaveLength(1);

      t.clock.advance(2 * 60 * 1000);
      const later = await loginUser(t.http, staff.username, staff.password);
      await checkPasses(t.http, { ...staff, access: later.access }, lib.slug);
      fake.reset();
      const confirm = await adminPost(t.http, later.access, `/${lib.slug}/confirm`, {});
      expect([confirm.status, confirm.body]).toEqual([409, refusal('writes_disabled')]);
      expect(fake.requestsTo('permissions')).toHaveLength(1);
      expect(fake.writeRequests).toEqual([]);
    });
  });

  describe('a 401 from the map API', () => {
    it('on changeset create: the write fails, and writes stay disabled until the token changes', async () => {
      const t = await app(writeEnv(fake));
      const first = await checkedLibrary(t);
      const second = await checkedLibrary(t);
      expect((await adminGet(t.http, staff.access, `/${first.slug}`)).body.eligible).toBe(true);
      fake.reset();

      fake.script('changeset.create', { kind: 'status', status: 401, body: 'token revoked' });
      const failed = await adminPost(t.http, staff.access, `/${first.slug}/confirm`, {});
      expect(failed.status).toBe(200);
      expect(failed.body).toMatchObject({
        status: 'failed',
        changeset_id: null,
        mapdb_element_id: null,
        last_error_code: 'write_unauthorized',
      });
      expect(failed.body.events.at(-1)).toMatchObject({
        type: 'write_failed',
        details: { error_code: 'write_unauthorized', changeset_id: null },
      });
      expect(fake.requestsTo('changeset.create')).toHaveLength(1);
      expect(fake.requestsTo('node.create')).toEqual([]);

      // Every further confirm is refused without a single outbound write (and without re-asking permissions).
      fake.reset();
      await expectRefusedWithoutWrites(t, second);
      expect(fake.requestsTo('permissions')).toEqual([]);
      const blocked = await adminGet(t.http, staff.access, `/${second.slug}`);
      expect(blocked.body.blockers[0].message).toMatch(/401/);

      // A restart with the same token stays disabled (the state is in the database, by token fingerprint).
      const restarted = await app(writeEnv(fake));
      await expectRefusedWithoutWrites(restarted, second);

      // A new token (the operator rotated it) re-enables writes once allow_write_api is confirmed for it.
      fake.token = 'rotated-token-5Lm0';
      const rotated = await app(writeEnv(fake, { MAPDB_OAUTH_ACCESS_TOKEN: 'rotated-token-5Lm0' }));
      const ok = await adminPost(rotated.http, staff.access, `/${second.slug}/confirm`, {});
      expect([ok.status, ok.body.status]).toEqual([200, 'contributed']);
      expect(fake.requestsTo('permissions')).toHaveLength(1);
      expect(fake.nodes.size).toBe(1);

      // The failed one needs reconciliation first; nothing was created, so it returns to unchecked.
      const retry = await adminPost(rotated.http, staff.access, `/${first.slug}/confirm`, {});
      expect([retry.status, retry.body]).toEqual([409, refusal('element_recorded')]);
      const reconciled = await adminPost(rotated.http, staff.access, `/${first.slug}/reconcile`);
      expect([reconciled.status, reconciled.body.status]).toEqual([200, 'unchecked']);
      await checkPasses(rotated.http, staff, first.slug);
      const again = await adminPost(rotated.http, staff.access, `/${first.slug}/confirm`, {});
      expect([again.status, again.body.status]).toEqual([200, 'contributed']);
      expect(fake.nodes.size).toBe(2);
    });

    it('on GET permissions (a revoked token): writes are disabled before anything is written', async () => {
      fake.token = 'the-server-only-knows-this-one';
      const t = await app(writeEnv(fake, { MAPDB_OAUTH_ACCESS_TOKEN: 'revoked-token-8Jd1' }));
      const lib = await checkedLibrary(t);
      await expectRefusedWithoutWrites(t, lib);
      expect(fake.requestsTo('permissions').map((req) => req.authorization)).toEqual(['invalid']);
    });

    it('during reconciliation: the reconcile is refused, the record stays failed, writes are disabled', async () => {
      const token = 'reconcile-token-2Pz5';
      fake.token = token;
      const t = await app(writeEnv(fake, { MAPDB_OAUTH_ACCESS_TOKEN: token }));
      const lib = await checkedLibrary(t);
      const other = await checkedLibrary(t);
      fake.script('node.create', { kind: 'write_then_drop' });
      expect((await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {})).body.status).toBe(
        'failed',
      );
      fake.script('changeset.show', { kind: 'status', status: 401 });
      const res = await adminPost(t.http, staff.access, `/${lib.slug}/reconcile`);
      expect([res.status, res.body]).toEqual([409, refusal('check_failed')]);
      expect(await contributionRow(db.url, lib.id)).toMatchObject({
        status: 'failed',
        last_error_code: 'reconcile_unauthorized',
      });
      fake.requests.splice(0);
      await expectRefusedWithoutWrites(t, other);
      expect(fake.nodes.size).toBe(1);
    });

    it('a 403 on node create disables writes too, keeping the changeset for reconciliation', async () => {
      const token = 'another-token-1Wq7';
      fake.token = token;
      const t = await app(writeEnv(fake, { MAPDB_OAUTH_ACCESS_TOKEN: token }));
      const lib = await checkedLibrary(t);
      const other = await checkedLibrary(t);
      fake.script('node.create', { kind: 'status', status: 403, body: 'blocked' });
      const failed = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {});
      expect(failed.body).toMatchObject({
        status: 'failed',
        last_error_code: 'write_forbidden',
        changeset_id: [...fake.changesets.keys()][0],
      });
      fake.reset();
      await expectRefusedWithoutWrites(t, other);
    });
  });
});
