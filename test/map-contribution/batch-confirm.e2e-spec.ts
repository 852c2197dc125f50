/**
 * POST /batch-confirm: same-area libraries share one changeset (one create, one node create each, one close), other
 * cities get their own, ineligible libraries are reported and never written, the capabilities' element limit caps a
 * batch, the kill switch refuses before any outbound write, an ambiguous node create mid-batch keeps the known node
 * and leaves the rest to reconciliation; and crash recovery: a record stuck in `submitting` reconciles once its
 * write_started is older than 10 minutes (by the injected clock), not before.
 */
import { registerUser } from '../support/auth.js';
import type { TestApp } from '../support/app.js';
import {
  DEG_PER_M,
  adminGet,
  adminPost,
  checkPasses,
  clearLog,
  codes,
  contributionRow,
  eventRows,
  nextPosition,
  registerStaff,
  sql,
  submitLibrary,
  writeEnv,
  type SubmittedLibrary,
  mapSuite,
} from './helpers.js';

const MINUTE = 60_000;

describe('map contribution batch confirm', () => {
  const suite = mapSuite();
  const { fake, db, t, startApp } = suite;
  /** Replaced by fresh sessions when the clock moves (`advance`). */
  let { staff, owner } = suite;
  let addresses = 0;

  afterEach(() => {
    fake.maxChangesetElements = 10_000;
  });

  /** An eligible library (checked, no_match) in `city`, `offsetM` metres north of `base` (a fresh point if none). */
  const eligible = async (
    city = 'Freiburg',
    base?: { latitude: number; longitude: number },
    offsetM = 0,
  ): Promise<SubmittedLibrary> => {
    const at = base ?? nextPosition();
    addresses += 1;
    const lib = await submitLibrary(t.http, owner, staff, {
      city,
      address: `Batchweg ${addresses}`,
      latitude: Number((at.latitude + offsetM * DEG_PER_M).toFixed(7)),
      longitude: at.longitude,
    });
    await checkPasses(t.http, staff, lib.slug);
    return lib;
  };

  const batchConfirm = (slugs: string[], verified?: object) =>
    adminPost(t.http, staff.access, '/batch-confirm', verified ? { slugs, verified } : { slugs });

  /** Moves the clock; fresh staff and owner sessions (their access tokens age by the same clock). */
  const advance = async (ms: number) => {
    t.clock.advance(ms);
    staff = await registerStaff(t.http, db.url);
    owner = await registerUser(t.http);
  };

  const endpoints = () => fake.requests.map((req) => req.endpoint).filter((e) => e !== 'query');

  it('two libraries 300 m apart in one city: one changeset with two nodes', async () => {
    const base = nextPosition();
    const a = await eligible('Freiburg', base);
    const b = await eligible('Freiburg', base, 300);
    fake.reset();

    const res = await batchConfirm([b.slug, a.slug]);
    expect(res.status).toBe(200);
    expect(endpoints()).toEqual([
      'capabilities',
      'changeset.create',
      'node.create',
      'node.create',
      'changeset.close',
    ]);
    const [changeset] = [...fake.changesets.values()];
    expect(fake.changesets.size).toBe(1);
    expect(changeset.open).toBe(false);
    expect(changeset.nodeIds).toHaveLength(2);
    expect(changeset.tags.comment).toBe('Add 2 reviewed public bookcases in Freiburg, DE');

    const [first, second] = [a, b].sort((x, y) => (x.slug < y.slug ? -1 : 1));
    expect(res.body).toEqual({
      batches: [
        {
          city: 'Freiburg',
          country: 'DE',
          changeset_id: changeset.id,
          items: [
            {
              slug: first.slug,
              status: 'contributed',
              mapdb_element_id: changeset.nodeIds[0],
              blockers: [],
            },
            {
              slug: second.slug,
              status: 'contributed',
              mapdb_element_id: changeset.nodeIds[1],
              blockers: [],
            },
          ],
        },
      ],
    });

    for (const [lib, nodeId] of [
      [first, changeset.nodeIds[0]],
      [second, changeset.nodeIds[1]],
    ] as const) {
      const node = fake.nodes.get(nodeId)!;
      expect([node.lat, node.lon]).toEqual([lib.lat, lib.lng]);
      const events = await eventRows(db.url, lib.id);
      const started = events.find((e) => e.event_type === 'write_started')!;
      const succeeded = events.at(-1)!;
      expect(started.details).toEqual({
        node: { lat: lib.lat, lon: lib.lng, tags: node.tags },
        changeset_tags: changeset.tags,
      });
      expect(succeeded).toMatchObject({
        event_type: 'write_succeeded',
        outcome: 'contributed',
        attempt_key: started.attempt_key,
        details: { element: `node/${nodeId}`, changeset_id: changeset.id },
      });
      expect(await contributionRow(db.url, lib.id)).toMatchObject({
        status: 'contributed',
        changeset_id: changeset.id,
        mapdb_element_id: nodeId,
        last_attempt_key: started.attempt_key,
      });
    }
  });

  it('two cities: two changesets', async () => {
    const base = nextPosition();
    const a = await eligible('Freiburg', base);
    const b = await eligible('Emmendingen', base, 300);
    fake.reset();

    const res = await batchConfirm([a.slug, b.slug]);
    expect(res.status).toBe(200);
    expect(fake.changesets.size).toBe(2);
    expect(fake.requestsTo('changeset.create')).toHaveLength(2);
    expect(fake.requestsTo('changeset.close')).toHaveLength(2);
    expect(fake.requestsTo('capabilities')).toHaveLength(1);
    expect(res.body.batches.map((batch: { city: string }) => batch.city)).toEqual([
      'Emmendingen',
      'Freiburg',
    ]);
    for (const batch of res.body.batches) {
      expect(batch.items).toHaveLength(1);
      expect(batch.items[0].status).toBe('contributed');
      expect(fake.changesets.get(batch.changeset_id)?.tags.comment).toBe(
        `Add 1 reviewed public bookcase in ${batch.city}, DE`,
      );
    }
  });

  it('an ineligible library in the batch is reported with its blockers and not written', async () => {
    const base = nextPosition();
    const a = await eligible('Freiburg', base);
    const b = await eligible('Freiburg', base, 300);
    await adminPost(t.http, staff.access, `/${b.slug}/withdraw`).expect(200);
    fake.reset();

    const res = await batchConfirm([a.slug, b.slug]);
    expect(res.status).toBe(200);
    const [batch] = res.body.batches;
    const byslug = Object.fromEntries(
      batch.items.map((item: { slug: string }) => [item.slug, item]),
    );
    expect(byslug[a.slug]).toMatchObject({ status: 'contributed', blockers: [] });
    expect(byslug[b.slug]).toMatchObject({ status: 'no_match', mapdb_element_id: null });
    expect(codes(byslug[b.slug])).toEqual(['permission_missing']);
    expect(fake.requestsTo('node.create')).toHaveLength(1);
    expect(fake.changesets.get(batch.changeset_id)?.tags.comment).toBe(
      'Add 1 reviewed public bookcase in Freiburg, DE',
    );
    expect((await eventRows(db.url, b.id)).map((e) => e.event_type)).not.toContain('write_started');
  });

  it('capabilities allowing 1 element per changeset: batches of one', async () => {
    const base = nextPosition();
    const a = await eligible('Freiburg', base);
    const b = await eligible('Freiburg', base, 300);
    fake.reset();
    fake.maxChangesetElements = 1;

    const res = await batchConfirm([a.slug, b.slug]);
    expect(res.status).toBe(200);
    expect(res.body.batches).toHaveLength(2);
    expect(fake.changesets.size).toBe(2);
    for (const changeset of fake.changesets.values()) expect(changeset.nodeIds).toHaveLength(1);
    expect(
      res.body.batches.flatMap((batch: { items: { status: string }[] }) =>
        batch.items.map((item) => item.status),
      ),
    ).toEqual(['contributed', 'contributed']);
  });

  it('an ambiguous second node create: first contributed, second failed; reconcile links it, no extra node', async () => {
    const base = nextPosition();
    const libs = [await eligible('Freiburg', base), await eligible('Freiburg', base, 300)].sort(
      (x, y) => (x.slug < y.slug ? -1 : 1),
    );
    fake.reset();
    fake.script('node.create', { kind: 'delay', ms: 0 });
    fake.script('node.create', { kind: 'write_then_drop' });

    const res = await batchConfirm(libs.map((lib) => lib.slug));
    expect(res.status).toBe(200);
    const [changeset] = [...fake.changesets.values()];
    const [firstNode, secondNode] = changeset.nodeIds;
    expect(res.body.batches[0]).toMatchObject({
      changeset_id: changeset.id,
      items: [
        { slug: libs[0].slug, status: 'contributed', mapdb_element_id: firstNode },
        { slug: libs[1].slug, status: 'failed', mapdb_element_id: null },
      ],
    });
    expect(changeset.open).toBe(false);
    expect(await contributionRow(db.url, libs[1].id)).toMatchObject({
      status: 'failed',
      changeset_id: changeset.id,
      last_error_code: 'write_ambiguous',
    });
    expect((await eventRows(db.url, libs[1].id)).at(-1)).toMatchObject({
      event_type: 'write_failed',
      outcome: 'reconcile_required',
      details: { error_code: 'write_ambiguous', changeset_id: changeset.id },
    });

    // Never retried: a second batch confirm of the failed library writes nothing.
    clearLog(fake);
    const again = await batchConfirm([libs[1].slug]);
    expect(again.status).toBe(200);
    expect(codes(again.body.batches[0].items[0])).toContain('element_recorded');
    expect(fake.writeRequests).toEqual([]);

    const reconciled = await adminPost(t.http, staff.access, `/${libs[1].slug}/reconcile`);
    expect(reconciled.status).toBe(200);
    expect(reconciled.body).toMatchObject({
      status: 'contributed',
      mapdb_element_type: 'node',
      mapdb_element_id: secondNode,
    });
    expect(reconciled.body.events.at(-1)).toMatchObject({
      type: 'reconciliation',
      outcome: 'contributed',
      details: { element: `node/${secondNode}`, closed_changeset: false },
    });
    expect(fake.requestsTo('node.create')).toEqual([]);
    expect(fake.nodes.size).toBe(2);
  });

  it('a failure on the changeset create fails every library of the batch; reconcile returns them to unchecked', async () => {
    const base = nextPosition();
    const a = await eligible('Freiburg', base);
    const b = await eligible('Freiburg', base, 300);
    fake.reset();
    fake.script('changeset.create', { kind: 'status', status: 500 });

    const res = await batchConfirm([a.slug, b.slug]);
    expect(res.status).toBe(200);
    expect(res.body.batches[0].changeset_id).toBeNull();
    expect(res.body.batches[0].items.map((item: { status: string }) => item.status)).toEqual([
      'failed',
      'failed',
    ]);
    expect(fake.requestsTo('node.create')).toEqual([]);
    for (const lib of [a, b]) {
      const reconciled = await adminPost(t.http, staff.access, `/${lib.slug}/reconcile`);
      expect([reconciled.status, reconciled.body.status]).toEqual([200, 'unchecked']);
    }
  });

  it('a record stuck in submitting: 409 at 9 minutes, reconciled at 11', async () => {
    const lib = await eligible();
    fake.reset();
    fake.script('node.create', { kind: 'write_then_drop' });
    await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {}).expect(200);
    const [nodeId] = [...fake.nodes.keys()];
    // The process "died" before it recorded the outcome: the record still reads submitting.
    await sql(db.url, "UPDATE map_contributions SET status = 'submitting' WHERE library_id = $1", [
      lib.id,
    ]);
    clearLog(fake);

    await advance(9 * MINUTE);
    const early = await adminPost(t.http, staff.access, `/${lib.slug}/reconcile`);
    expect(early.status).toBe(409);
    expect(codes(early.body.details)).toEqual(['writes_disabled']);
    expect(fake.requests).toEqual([]);
    expect((await contributionRow(db.url, lib.id))?.status).toBe('submitting');

    await advance(2 * MINUTE);
    const res = await adminPost(t.http, staff.access, `/${lib.slug}/reconcile`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'contributed',
      mapdb_element_type: 'node',
      mapdb_element_id: nodeId,
    });
    expect(fake.requestsTo('node.create')).toEqual([]);
    expect(fake.nodes.size).toBe(1);
  });

  it('a stuck submitting record whose changeset was never recorded goes back to unchecked', async () => {
    const lib = await eligible();
    fake.reset();
    fake.script('changeset.create', { kind: 'status', status: 500 });
    await adminPost(t.http, staff.access, `/${lib.slug}/confirm`, {}).expect(200);
    await sql(db.url, "UPDATE map_contributions SET status = 'submitting' WHERE library_id = $1", [
      lib.id,
    ]);
    await advance(11 * MINUTE);
    const res = await adminPost(t.http, staff.access, `/${lib.slug}/reconcile`);
    expect([res.status, res.body.status]).toEqual([200, 'unchecked']);
  });

  it('validates the body', async () => {
    const lib = await eligible();
    const bad = [
      {},
      { slugs: [] },
      { slugs: [lib.slug, lib.slug] },
      { slugs: Array.from({ length: 51 }, (_, i) => `s-${i}`) },
      { slugs: [lib.slug], verified: { name: 'yes' } },
    ];
    for (const body of bad) {
      const res = await adminPost(t.http, staff.access, '/batch-confirm', body);
      expect([body, res.status]).toEqual([body, 422]);
    }
    expect(
      (await adminPost(t.http, owner.access, '/batch-confirm', { slugs: [lib.slug] })).status,
    ).toBe(403);
  });

  describe('with the kill switch off', () => {
    let off: TestApp;

    beforeAll(async () => {
      off = await startApp({ env: writeEnv(fake, { MAPDB_WRITE_ENABLED: 'false' }) });
    });

    it('409 with blockers and zero outbound writes', async () => {
      const base = nextPosition();
      const a = await eligible('Freiburg', base);
      const b = await eligible('Freiburg', base, 300);
      fake.reset();

      const res = await adminPost(off.http, staff.access, '/batch-confirm', {
        slugs: [a.slug, b.slug],
      });
      expect(res.status).toBe(409);
      expect(codes(res.body.details)).toEqual(['writes_disabled']);
      expect(fake.writeRequests).toEqual([]);
      for (const lib of [a, b]) {
        expect((await adminGet(off.http, staff.access, `/${lib.slug}`)).body.status).toBe(
          'no_match',
        );
      }
    });
  });
});
