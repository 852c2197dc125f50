/**
 * POST /{slug}/confirm: eligibility re-read inside the write lock (changes made while the confirmation's own check
 * is in flight), and the lock order against a withdrawal. Split from confirm.e2e-spec.ts.
 */
import pg from 'pg';
import request from 'supertest';
import { describeWithDatabaseServer } from '../support/app.js';
import { multipart } from '../support/libraries.js';
import {
  DEG_PER_M,
  adminPost,
  contributionRow,
  eventRows,
  moderate,
  refusal,
  type SubmittedLibrary,
} from './helpers.js';
import { confirmSuite } from './confirm-support.js';

describe('map contribution confirm: the write lock', () => {
  const { fake, db, t, staff, owner, eligible, startConfirm } = confirmSuite();

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
});
