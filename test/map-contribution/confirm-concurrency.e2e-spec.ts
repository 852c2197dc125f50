/**
 * POST /{slug}/confirm under concurrency: twenty confirms of one library create one node; a stale check cannot
 * reopen a claimed record; two libraries never hold two changesets open at once. Split from confirm.e2e-spec.ts.
 */
import { contributionRow, eventRows, maxOpenChangesets, refusal } from './helpers.js';
import { confirmSuite } from './confirm-support.js';

describe('map contribution confirm: concurrency', () => {
  const { fake, db, eligible, startConfirm } = confirmSuite();

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
});
