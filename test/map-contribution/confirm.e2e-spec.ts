/**
 * POST /{slug}/confirm: the spec's write order as the fake map server and the database see it, eligibility re-read
 * inside the write lock (changes made while the confirmation's own check is in flight), and concurrency: twenty
 * confirms of one library create one node; two libraries never hold two changesets open at once.
 */
import pg from 'pg';
import request from 'supertest';
import { bearer, registerUser, type RegisteredUser } from '../support/auth.js';
import { createTestApp, describeWithDatabaseServer, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { FakeMapServer } from '../support/fake-map-server.js';
import { multipart } from '../support/libraries.js';
import {
  DEG_PER_M,
  MAP_TOKEN,
  USER_AGENT,
  adminGet,
  adminPost,
  checkPasses,
  contributionRow,
  eventRows,
  maxOpenChangesets,
  moderate,
  registerStaff,
  submitLibrary,
  writeEnv,
  type SubmittedLibrary,
} from './helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('map contribution confirm', () => {
  const fake = new FakeMapServer({ token: MAP_TOKEN });
  let db: TestDatabase;
  let t: TestApp;
  let staff: RegisteredUser;
  let owner: RegisteredUser;

  beforeAll(async () => {
    await fake.start();
    db = await createTestDatabase();
    t = await createTestApp({ databaseUrl: db.url, env: writeEnv(fake) });
    staff = await registerStaff(t.http, db.url);
    owner = await registerUser(t.http);
  });

  afterAll(async () => {
    fake.release();
    await t?.close();
    await db?.drop();
    await fake.stop();
  });

  /** An eligible library: submitted, approved, checked; allow_write_api confirmed; the fake's log emptied. */
  const eligible = async (fields = {}) => {
    const lib = await submitLibrary(t.http, owner, staff, fields);
    await checkPasses(t.http, staff, lib.slug);
    const detail = await adminGet(t.http, staff.access, `/${lib.slug}`);
    expect([detail.body.eligible, detail.body.blockers]).toEqual([true, []]);
    fake.reset();
    return lib;
  };

  /** Starts a confirm without waiting for it (supertest sends on `then`). */
  const startConfirm = (lib: SubmittedLibrary, body: object = {}) =>
    adminPost(t.http, staff.access, `/${lib.slug}/confirm`, body).then((res) => res);

  const refusal = (...blockers: string[]) => ({
    message: expect.any(String),
    details: { blockers: blockers.map((code) => ({ code, message: expect.any(String) })) },
  });

  describe('the write order', () => {
    it('capabilities, check, changeset create, node create, changeset close — as the fake and the database see it', async () => {
      const lib = await eligible({ name: 'Lesekiste am Rathaus', capacity: 30 });
      const res = await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {
        verified_name: true,
      });
      expect(res.status).toBe(200);

      expect(fake.requests.map((req) => `${req.method} ${req.path.split('?')[0]}`)).toEqual([
        'GET /api/0.6/capabilities',
        'POST /api/interpreter',
        'PUT /api/0.6/changeset/create',
        'POST /api/0.6/nodes',
        `PUT /api/0.6/changeset/${res.body.changeset_id}/close`,
      ]);
      for (const req of fake.requests) {
        expect(req.headers['user-agent']).toBe(USER_AGENT);
        expect(req.authorization).toBe(req.endpoint === 'query' ? 'absent' : 'valid');
      }
      const [changeset] = [...fake.changesets.values()];
      const [node] = [...fake.nodes.values()];
      expect(changeset).toMatchObject({
        id: res.body.changeset_id,
        open: false,
        nodeIds: [node.id],
      });
      expect(node).toMatchObject({ changesetId: changeset.id, lat: lib.lat, lon: lib.lng });
      expect(node.tags).toEqual({
        amenity: 'public_bookcase',
        name: 'Lesekiste am Rathaus',
        capacity: '30',
      });

      expect(res.body).toMatchObject({
        status: 'contributed',
        mapdb_element_type: 'node',
        mapdb_element_id: node.id,
        changeset_id: changeset.id,
        contributed_at: t.clock.date().toISOString(),
        contributed_by: { id: staff.id, username: staff.username },
        last_error_code: '',
        last_error_message: '',
        eligible: false,
      });
      expect(res.body.last_attempt_key).toMatch(UUID);
      expect(await contributionRow(db.url, lib.id)).toMatchObject({
        status: 'contributed',
        mapdb_element_type: 'node',
        mapdb_element_id: node.id,
        changeset_id: changeset.id,
        contributed_by: staff.id,
        last_attempt_key: res.body.last_attempt_key,
      });

      const events = await eventRows(db.url, lib.id);
      expect(events.map((e) => [e.event_type, e.outcome])).toEqual([
        ['duplicate_check', 'no_match'],
        ['duplicate_check', 'no_match'],
        ['write_started', 'started'],
        ['write_succeeded', 'contributed'],
      ]);
      const [, , started, succeeded] = events;
      for (const event of [started, succeeded]) {
        expect(event).toMatchObject({
          actor_id: staff.id,
          actor_username: staff.username,
          attempt_key: res.body.last_attempt_key,
        });
      }
      expect(started.details).toEqual({
        node: { lat: lib.lat, lon: lib.lng, tags: node.tags },
        changeset_tags: changeset.tags,
      });
      expect(succeeded.details).toEqual({ element: `node/${node.id}`, changeset_id: changeset.id });
    });

    it('persists the changeset id before the node is created, and the node id before the close', async () => {
      const lib = await eligible();
      fake.script('node.create', { kind: 'hold' });
      const pending = startConfirm(lib);

      await fake.waitForRequests(1, 'node.create');
      const [changesetId] = [...fake.changesets.keys()];
      expect(await contributionRow(db.url, lib.id)).toMatchObject({
        status: 'submitting',
        changeset_id: changesetId,
        mapdb_element_id: null,
      });
      expect((await eventRows(db.url, lib.id)).map((e) => e.event_type)).toEqual([
        'duplicate_check',
        'duplicate_check',
        'write_started',
      ]);

      fake.script('changeset.close', { kind: 'hold' });
      fake.release();
      await fake.waitForRequests(1, 'changeset.close');
      const [nodeId] = [...fake.nodes.keys()];
      expect(await contributionRow(db.url, lib.id)).toMatchObject({
        status: 'submitting',
        changeset_id: changesetId,
        mapdb_element_type: 'node',
        mapdb_element_id: nodeId,
      });

      fake.release();
      const res = await pending;
      expect([res.status, res.body.status, res.body.mapdb_element_id]).toEqual([
        200,
        'contributed',
        nodeId,
      ]);
    });

    it('a contributed library is never written again', async () => {
      const lib = await eligible();
      expect((await startConfirm(lib)).body.status).toBe('contributed');
      fake.reset();
      for (let i = 0; i < 3; i += 1) {
        const again = await startConfirm(lib);
        expect([again.status, again.body]).toEqual([409, refusal('element_recorded')]);
      }
      expect((await adminPost(t.http, staff.access, `/${lib.slug}/check`)).status).toBe(409);
      expect(fake.writeRequests).toEqual([]);
    });
  });

  describe('eligibility is re-read inside the write lock', () => {
    /**
     * Holds the confirmation's own duplicate query (after the early eligibility check passed), applies `change`,
     * then lets the query answer: the confirm must be refused by the re-read under the lock.
     */
    const changedDuringCheck = async (change: (lib: SubmittedLibrary) => Promise<void>) => {
      const lib = await eligible();
      fake.script('query', { kind: 'hold' });
      const pending = startConfirm(lib);
      await fake.waitForRequests(1, 'query');
      await change(lib);
      fake.release();
      const res = await pending;
      expect(fake.writeRequests).toEqual([]);
      const row = await contributionRow(db.url, lib.id);
      expect(row?.status).not.toBe('submitting');
      expect((await eventRows(db.url, lib.id)).map((e) => e.event_type)).not.toContain(
        'write_started',
      );
      return res;
    };

    it('permission withdrawn by staff meanwhile → 409 permission_missing', async () => {
      const res = await changedDuringCheck(async (lib) => {
        expect((await adminPost(t.http, staff.access, `/${lib.slug}/withdraw`)).status).toBe(200);
      });
      expect([res.status, res.body]).toEqual([409, refusal('permission_missing')]);
    });

    it('returned to pending by moderation meanwhile → 409 not_approved', async () => {
      const res = await changedDuringCheck((lib) =>
        moderate(t.http, staff, lib.slug, { status: 'pending' }),
      );
      expect([res.status, res.body]).toEqual([409, refusal('not_approved')]);
    });

    it('an owner edit staged meanwhile → 409 pending_changes', async () => {
      const res = await changedDuringCheck(async (lib) => {
        const edit = await multipart(
          request(t.http).patch(`/api/v1/libraries/${lib.slug}`),
          { name: 'Renamed while staff confirmed' },
          null,
          owner.access,
        );
        expect(edit.status).toBe(200);
      });
      expect([res.status, res.body]).toEqual([409, refusal('pending_changes')]);
    });

    it('a bookcase mapped since the last check → the rerun finds it, 409 possible_duplicate', async () => {
      const lib = await eligible();
      fake.seedQuery({
        type: 'node',
        id: 4242,
        lat: lib.lat + 8 * DEG_PER_M,
        lon: lib.lng,
        tags: { amenity: 'public_bookcase' },
      });
      const res = await startConfirm(lib);
      expect([res.status, res.body]).toEqual([409, refusal('possible_duplicate')]);
      expect(fake.writeRequests).toEqual([]);
      expect((await contributionRow(db.url, lib.id))?.status).toBe('possible_duplicate');
    });

    it('a race with a PATCH: either the write went first (edit staged afterwards) or it was refused', async () => {
      const lib = await eligible();
      const [confirm, edit] = await Promise.all([
        startConfirm(lib),
        multipart(
          request(t.http).patch(`/api/v1/libraries/${lib.slug}`),
          { capacity: 77 },
          null,
          owner.access,
        ).then((res) => res),
      ]);
      expect(edit.status).toBe(200);
      if (confirm.status === 200) {
        expect(confirm.body.status).toBe('contributed');
        expect(fake.nodes.size).toBe(1);
        expect([...fake.nodes.values()][0].tags.capacity).toBeUndefined();
      } else {
        expect([confirm.status, confirm.body]).toEqual([409, refusal('pending_changes')]);
        expect(fake.writeRequests).toEqual([]);
      }
    });
  });

  // A second session holds the row: needs a PostgreSQL server (the embedded database runs one session).
  describeWithDatabaseServer('lock order', () => {
    /** Sessions of this test's database waiting on a lock (a fresh statistics snapshot each time). */
    const lockWaiters = async (client: pg.Client) => {
      await client.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND state = 'active' AND wait_event_type = 'Lock'`,
      );
      return rows[0].n;
    };

    const until = async (client: pg.Client, waiting: number) => {
      for (let i = 0; i < 500 && (await lockWaiters(client)) < waiting; i += 1) {
        await client.query('SELECT pg_sleep(0.01)');
      }
      expect(await lockWaiters(client)).toBe(waiting);
    };

    it('a withdrawal racing the write claim neither deadlocks nor lets a withdrawn library be written', async () => {
      const lib = await eligible();
      const blocker = new pg.Client({ connectionString: db.url });
      await blocker.connect();
      try {
        // Hold the library row so the confirm's claim queues on it first, then the withdrawal behind it.
        await blocker.query('BEGIN');
        await blocker.query('SELECT id FROM libraries WHERE id = $1 FOR UPDATE', [lib.id]);
        const confirm = startConfirm(lib);
        await until(blocker, 1);
        const withdraw = adminPost(t.http, staff.access, `/${lib.slug}/withdraw`).then((r) => r);
        await until(blocker, 2);
        await blocker.query('COMMIT');

        const [confirmed, withdrawn] = await Promise.all([confirm, withdraw]);
        expect([confirmed.status, confirmed.body.status]).toEqual([200, 'contributed']);
        expect([withdrawn.status, withdrawn.body.library.mapdb_submission_allowed]).toEqual([
          200,
          false,
        ]);
        expect(fake.nodes.size).toBe(1);
      } finally {
        await blocker.end();
      }
    });
  });

  describe('concurrency', () => {
    it('20 concurrent confirms of one library: one 200, nineteen 409, exactly one node', async () => {
      const lib = await eligible();
      const responses = await Promise.all(Array.from({ length: 20 }, () => startConfirm(lib)));
      const statuses = responses.map((res) => res.status).sort();
      expect(statuses).toEqual([200, ...Array(19).fill(409)]);
      for (const res of responses.filter((r) => r.status === 409)) {
        expect(res.body.details.blockers.length).toBeGreaterThan(0);
      }
      expect(fake.nodes.size).toBe(1);
      expect(fake.changesets.size).toBe(1);
      expect(fake.requestsTo('node.create')).toHaveLength(1);
      const row = await contributionRow(db.url, lib.id);
      expect([row?.status, row?.mapdb_element_id]).toEqual([
        'contributed',
        [...fake.nodes.keys()][0],
      ]);
      const types = (await eventRows(db.url, lib.id)).map((e) => e.event_type);
      expect(types.filter((type) => type === 'write_started')).toHaveLength(1);
      expect(types.filter((type) => type === 'write_succeeded')).toHaveLength(1);
    });

    it('a check that read the record before a write claimed it cannot reopen the record for a second write', async () => {
      const lib = await eligible();
      // B's confirmation check is held with the record still no_match…
      fake.script('query', { kind: 'hold' });
      const b = startConfirm(lib);
      await fake.waitForRequests(1, 'query');
      // …while A confirms: its check passes, it claims the record, and its changeset create takes a while.
      fake.script('changeset.create', { kind: 'delay', ms: 1500 });
      const a = startConfirm(lib);
      await fake.waitForRequests(1, 'changeset.create');
      // B's check now completes on a record that is submitting.
      fake.release();
      const [resA, resB] = await Promise.all([a, b]);
      expect([resA.status, resA.body.status]).toEqual([200, 'contributed']);
      expect(resB.status).toBe(409);
      expect(fake.nodes.size).toBe(1);
      expect(fake.changesets.size).toBe(1);
      expect((await contributionRow(db.url, lib.id))?.status).toBe('contributed');
    });

    it('two libraries: the second is refused while the first write is in flight, then succeeds', async () => {
      const first = await eligible();
      const second = await eligible();
      fake.script('changeset.create', { kind: 'hold' });
      const a = startConfirm(first);
      await fake.waitForRequests(1, 'changeset.create');

      const b = await startConfirm(second);
      expect([b.status, b.body]).toEqual([409, refusal('writes_disabled')]);
      expect(b.body.details.blockers[0].message).toMatch(/in flight/);
      expect((await contributionRow(db.url, second.id))?.status).toBe('no_match');

      fake.release();
      expect((await a).body.status).toBe('contributed');
      const retry = await startConfirm(second);
      expect([retry.status, retry.body.status]).toEqual([200, 'contributed']);
      expect(fake.nodes.size).toBe(2);
      expect(maxOpenChangesets(fake)).toBe(1);
    });

    it('two libraries confirmed at once: never two changesets open; each is written or refused as busy', async () => {
      const libs = [await eligible(), await eligible()];
      const responses = await Promise.all(libs.map((lib) => startConfirm(lib)));
      expect(maxOpenChangesets(fake)).toBe(1);
      const written = responses.filter((res) => res.status === 200);
      expect(written.length).toBeGreaterThanOrEqual(1);
      for (const res of responses.filter((r) => r.status !== 200)) {
        expect([res.status, res.body]).toEqual([409, refusal('writes_disabled')]);
      }
      for (const [index, res] of responses.entries()) {
        if (res.status !== 200) {
          const retry = await startConfirm(libs[index]);
          expect(retry.body.status).toBe('contributed');
        }
      }
      expect(fake.nodes.size).toBe(2);
      expect(maxOpenChangesets(fake)).toBe(1);
    });
  });

  it('a non-staff user cannot confirm: 403, and no map call', async () => {
    const lib = await eligible();
    const res = await request(t.http)
      .post(`/api/v1/admin/map-contributions/${lib.slug}/confirm`)
      .set('Authorization', bearer(owner.access))
      .send({});
    expect(res.status).toBe(403);
    expect(fake.requests).toEqual([]);
  });
});
