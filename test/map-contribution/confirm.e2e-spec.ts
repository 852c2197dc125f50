/**
 * POST /{slug}/confirm: the spec's write order as the fake map server and the database see it, and who may confirm.
 * Eligibility re-read inside the write lock is in confirm-lock.e2e-spec.ts, concurrency in
 * confirm-concurrency.e2e-spec.ts.
 */
import request from 'supertest';
import { bearer } from '../support/auth.js';
import { USER_AGENT, adminPost, contributionRow, eventRows, refusal } from './helpers.js';
import { UUID, confirmSuite } from './confirm-support.js';

describe('map contribution confirm', () => {
  const { fake, db, t, staff, owner, eligible, startConfirm } = confirmSuite();

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
