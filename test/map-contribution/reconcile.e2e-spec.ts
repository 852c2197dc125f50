/**
 * Ambiguous and failed writes, and POST /{slug}/reconcile: a lost node-create answer ends in `failed` with the
 * changeset id kept; reconcile downloads the changeset, links the node it finds, closes the changeset, and no second
 * node is ever created. A lost changeset-create answer reconciles to `unchecked`; a failed close keeps the node id
 * and reconcile closes it. Confirm on failed and reconcile on anything else are 409.
 */
import { itWithDatabaseServer } from '../support/app.js';
import { withClient } from '../support/database.js';
import type { FakeMapBehaviour } from '../support/fake-map-server.js';
import {
  clearLog,
  adminPost,
  checkPasses,
  codes,
  contributionRow,
  eventRows,
  submitLibrary,
  type SubmittedLibrary,
  mapSuite,
  eligibleLibrary,
  refusal,
} from './helpers.js';

describe('map contribution reconciliation', () => {
  const suite = mapSuite();
  const { fake, db, t, staff, owner } = suite;

  const eligible = () => eligibleLibrary(suite);

  const confirm = (lib: SubmittedLibrary) =>
    adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {});
  const reconcile = (lib: SubmittedLibrary) =>
    adminPost(t.http, staff.access, `/${lib.slug}/reconcile`);

  /** Confirm and retry confirm/check on a failed record: all refused without a write. */
  const failedAndStuck = async (
    lib: SubmittedLibrary,
    behaviour: FakeMapBehaviour,
    on: 'node.create' | 'changeset.create' | 'changeset.close',
  ) => {
    fake.script(on, behaviour);
    const res = await confirm(lib);
    expect([res.status, res.body.status]).toEqual([200, 'failed']);
    const writes = fake.writeRequests.length;
    for (let i = 0; i < 3; i += 1) {
      const again = await confirm(lib);
      expect([again.status, again.body]).toEqual([409, refusal('element_recorded')]);
    }
    expect((await adminPost(t.http, staff.access, `/${lib.slug}/check`)).status).toBe(409);
    expect(fake.writeRequests.length).toBe(writes);
    return res.body;
  };

  describe('an ambiguous node create', () => {
    it.each<[string, FakeMapBehaviour]>([
      [
        'the answer is lost (socket dropped after the node was created)',
        { kind: 'write_then_drop' },
      ],
      ['a 502 after the node was created', { kind: 'write_then_status', status: 502 }],
    ])(
      '%s: failed with the changeset kept; reconcile links the node; one node ever',
      async (_label, behaviour) => {
        const lib = await eligible();
        const failed = await failedAndStuck(lib, behaviour, 'node.create');
        const [changesetId] = [...fake.changesets.keys()];
        const [nodeId] = [...fake.nodes.keys()];
        expect(failed).toMatchObject({
          status: 'failed',
          changeset_id: changesetId,
          mapdb_element_type: null,
          mapdb_element_id: null,
          last_error_code: 'write_ambiguous',
          contributed_at: null,
          eligible: false,
        });
        expect(codes(failed)).toEqual(['element_recorded']);
        expect(failed.events.at(-1)).toMatchObject({
          type: 'write_failed',
          outcome: 'reconcile_required',
          actor: { id: staff.id, username: staff.username },
          attempt_key: failed.last_attempt_key,
          details: { error_code: 'write_ambiguous', changeset_id: changesetId },
        });
        expect(fake.changesets.get(changesetId)?.open).toBe(true);

        clearLog(fake);
        const res = await reconcile(lib);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({
          status: 'contributed',
          changeset_id: changesetId,
          mapdb_element_type: 'node',
          mapdb_element_id: nodeId,
          contributed_by: { id: staff.id, username: staff.username },
          last_error_code: '',
        });
        expect(res.body.events.at(-1)).toMatchObject({
          type: 'reconciliation',
          outcome: 'contributed',
          details: { changeset_id: changesetId, element: `node/${nodeId}`, closed_changeset: true },
        });
        expect(fake.requests.map((req) => req.endpoint)).toEqual([
          'changeset.show',
          'changeset.download',
          'changeset.close',
        ]);
        expect(fake.requestsTo('node.create')).toEqual([]);
        expect(fake.changesets.get(changesetId)?.open).toBe(false);

        // Nothing more can happen to it.
        expect((await reconcile(lib)).status).toBe(409);
        expect((await confirm(lib)).status).toBe(409);
        expect(fake.nodes.size).toBe(1);
        expect(fake.requestsTo('node.create')).toEqual([]);
      },
    );
  });

  it('an ambiguous changeset create: failed with nothing known; reconcile → unchecked, nothing created', async () => {
    const lib = await eligible();
    const failed = await failedAndStuck(lib, { kind: 'write_then_drop' }, 'changeset.create');
    expect(failed).toMatchObject({
      status: 'failed',
      changeset_id: null,
      mapdb_element_id: null,
      last_error_code: 'write_ambiguous',
    });
    expect(fake.requestsTo('node.create')).toEqual([]);

    clearLog(fake);
    const res = await reconcile(lib);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'unchecked',
      changeset_id: null,
      mapdb_element_id: null,
      checked_at: null,
    });
    expect(res.body.events.at(-1)).toMatchObject({
      type: 'reconciliation',
      outcome: 'nothing_created',
    });
    expect(codes(res.body)).toEqual(['check_missing']);
    expect(fake.writeRequests).toEqual([]);
    expect(fake.nodes.size).toBe(0);

    // A fresh check, then a normal write.
    await checkPasses(t.http, staff, lib.slug);
    const retry = await confirm(lib);
    expect([retry.status, retry.body.status]).toEqual([200, 'contributed']);
    expect(fake.nodes.size).toBe(1);
  });

  it('a definite refusal of the node create (409): failed; reconcile finds no node → unchecked', async () => {
    const lib = await eligible();
    const failed = await failedAndStuck(
      lib,
      { kind: 'status', status: 409, body: 'conflict' },
      'node.create',
    );
    expect(failed.last_error_code).toBe('write_rejected');
    const changesetId = failed.changeset_id;
    expect(changesetId).toEqual(expect.any(Number));
    clearLog(fake);
    const res = await reconcile(lib);
    expect(res.body).toMatchObject({ status: 'unchecked', mapdb_element_id: null });
    expect(res.body.events.at(-1)).toMatchObject({
      type: 'reconciliation',
      outcome: 'nothing_created',
      details: { changeset_id: changesetId, element: null },
    });
    expect(fake.requestsTo('node.create')).toEqual([]);
  });

  it('a failed close after the node exists: the element id is kept; reconcile closes the changeset', async () => {
    const lib = await eligible();
    const failed = await failedAndStuck(
      lib,
      { kind: 'status', status: 500, body: 'close failed' },
      'changeset.close',
    );
    const [nodeId] = [...fake.nodes.keys()];
    const [changesetId] = [...fake.changesets.keys()];
    expect(failed).toMatchObject({
      status: 'failed',
      changeset_id: changesetId,
      mapdb_element_type: 'node',
      mapdb_element_id: nodeId,
      last_error_code: 'write_ambiguous',
    });
    expect(failed.events.at(-1)).toMatchObject({
      type: 'write_failed',
      details: { changeset_id: changesetId, node_id: nodeId, step: 'close' },
    });
    expect(fake.changesets.get(changesetId)?.open).toBe(true);

    clearLog(fake);
    const res = await reconcile(lib);
    expect(res.body).toMatchObject({
      status: 'contributed',
      mapdb_element_id: nodeId,
      changeset_id: changesetId,
    });
    expect(fake.changesets.get(changesetId)?.open).toBe(false);
    expect(fake.requestsTo('node.create')).toEqual([]);
    expect(fake.nodes.size).toBe(1);
  });

  it('a close whose answer was lost (it did close): reconcile links the node and does not close again', async () => {
    const lib = await eligible();
    await failedAndStuck(lib, { kind: 'write_then_drop' }, 'changeset.close');
    const [changesetId] = [...fake.changesets.keys()];
    expect(fake.changesets.get(changesetId)?.open).toBe(false);
    clearLog(fake);
    const res = await reconcile(lib);
    expect(res.body.status).toBe('contributed');
    expect(res.body.events.at(-1).details.closed_changeset).toBe(false);
    expect(fake.writeRequests).toEqual([]);
  });

  it('a reconcile that cannot read the changeset is 409 and stays failed; a later one succeeds', async () => {
    const lib = await eligible();
    await failedAndStuck(lib, { kind: 'write_then_drop' }, 'node.create');
    fake.script('changeset.download', { kind: 'status', status: 503, body: 'busy' });
    const res = await reconcile(lib);
    expect(res.status).toBe(409);
    expect(res.body.details.blockers).toHaveLength(1);
    const row = await contributionRow(db.url, lib.id);
    expect([row?.status, row?.last_error_code]).toEqual(['failed', 'reconcile_server_error']);
    expect((await eventRows(db.url, lib.id)).at(-1)).toMatchObject({
      event_type: 'reconciliation',
      outcome: 'failed',
      details: { error_code: 'reconcile_server_error' },
    });
    const later = await reconcile(lib);
    expect([later.status, later.body.status]).toEqual([200, 'contributed']);
    expect(fake.requestsTo('node.create')).toHaveLength(1);
  });

  // The first reconciliation holds the record (and so a pool connection) while it talks to the map: the embedded
  // database's single connection cannot serve the second meanwhile.
  itWithDatabaseServer(
    'two reconciles at once: one links the node, the other is refused; one close, nothing created',
    async () => {
      const lib = await eligible();
      await failedAndStuck(lib, { kind: 'write_then_drop' }, 'node.create');
      clearLog(fake);
      fake.script('changeset.show', { kind: 'hold' }, 2);
      const first = reconcile(lib).then((res) => res);
      await fake.waitForRequests(1, 'changeset.show');
      let settled = false;
      const second = reconcile(lib).then((res) => {
        settled = true;
        return res;
      });
      // The second either is refused at once or reaches the map too (held as well); then both go on.
      while (!settled && fake.requestsTo('changeset.show').length < 2) {
        await fake.waitForRequests(fake.requests.length + 1, undefined, 100).catch(() => undefined);
      }
      fake.release();
      const responses = await Promise.all([first, second]);
      expect(responses.map((res) => res.status).sort()).toEqual([200, 409]);
      expect(responses.find((res) => res.status === 200)?.body.status).toBe('contributed');
      expect(fake.requestsTo('changeset.close')).toHaveLength(1);
      expect(fake.requestsTo('node.create')).toEqual([]);
      const row = await contributionRow(db.url, lib.id);
      expect([row?.status, row?.last_error_code]).toEqual(['contributed', '']);
      const reconciliations = (await eventRows(db.url, lib.id)).filter(
        (event) => event.event_type === 'reconciliation',
      );
      expect(reconciliations.map((event) => event.outcome)).toEqual(['contributed']);
    },
  );

  // The map is read with no transaction open and no lock held (only storing the outcome takes the record's lock):
  // while the changeset read hangs, another session locks the record at once and the app holds no transaction.
  itWithDatabaseServer(
    'reconcile holds no lock and no transaction while it reads the changeset',
    async () => {
      const lib = await eligible();
      await failedAndStuck(lib, { kind: 'write_then_drop' }, 'node.create');
      clearLog(fake);
      fake.script('changeset.show', { kind: 'hold' });
      const pending = reconcile(lib).then((res) => res);
      await fake.waitForRequests(1, 'changeset.show');
      const seen = await withClient(db.url, async (client) => {
        await client.query('BEGIN');
        const locked = await client.query(
          'SELECT status FROM map_contributions WHERE library_id = $1 FOR UPDATE NOWAIT',
          [lib.id],
        );
        await client.query('ROLLBACK');
        const open = await client.query<{ count: number }>(
          `SELECT count(*)::int AS count FROM pg_stat_activity
           WHERE datname = current_database() AND pid <> pg_backend_pid()
             AND state IN ('idle in transaction', 'active') AND backend_type = 'client backend'`,
        );
        return { status: locked.rows[0]?.status, busy: open.rows[0]?.count };
      });
      fake.release();
      expect(seen).toEqual({ status: 'failed', busy: 0 });
      const res = await pending;
      expect([res.status, res.body.status]).toEqual([200, 'contributed']);
    },
  );

  it('reconcile on anything but failed is 409 and calls nothing', async () => {
    const unchecked = await submitLibrary(t.http, owner, staff);
    const checked = await eligible();
    const contributed = await eligible();
    expect((await confirm(contributed)).body.status).toBe('contributed');
    clearLog(fake);
    for (const lib of [unchecked, checked, contributed]) {
      const res = await reconcile(lib);
      expect([res.status, res.body]).toEqual([409, refusal('element_recorded')]);
    }
    expect(fake.requests).toEqual([]);
  });

  it('a failed record does not hold other libraries back', async () => {
    const broken = await eligible();
    const other = await eligible();
    await failedAndStuck(broken, { kind: 'write_then_drop' }, 'node.create');
    const res = await confirm(other);
    expect([res.status, res.body.status]).toEqual([200, 'contributed']);
  });
});
