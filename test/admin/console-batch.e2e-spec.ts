/**
 * The console's batch write: eligible libraries ticked on the contributions list, a confirmation page with every
 * node's tags, and the confirmed POST reaching the same batch confirm as the JSON API (one changeset per city).
 */
import { signInConsole, type ConsoleAgent } from '../support/console.js';
import {
  DEG_PER_M,
  checkPasses,
  nextPosition,
  submitLibrary,
  type SubmittedLibrary,
  mapSuite,
} from '../map-contribution/helpers.js';

describe('staff console batch write', () => {
  const { fake, t, staff, owner } = mapSuite();
  let agent: ConsoleAgent;
  let csrf: string;
  let a: SubmittedLibrary;
  let b: SubmittedLibrary;

  beforeAll(async () => {
    const base = nextPosition();
    const eligible = async (address: string, offsetM: number) => {
      const lib = await submitLibrary(t.http, owner, staff, {
        city: 'Freiburg',
        address,
        latitude: Number((base.latitude + offsetM * DEG_PER_M).toFixed(7)),
        longitude: base.longitude,
      });
      await checkPasses(t.http, staff, lib.slug);
      return lib;
    };
    a = await eligible('Batchweg 1', 0);
    b = await eligible('Batchweg 2', 300);
    ({ agent, csrf } = await signInConsole(t.http, staff));
  });

  it('offers a selection box for each eligible library on the list', async () => {
    const res = await agent.get('/admin/contributions?eligible=true');
    expect(res.status).toBe(200);
    for (const lib of [a, b]) {
      expect(res.text).toContain(`form="batch-form" name="slugs" value="${lib.slug}"`);
    }
    expect(res.text).toContain(
      '<form id="batch-form" method="get" action="/admin/contributions-batch"',
    );
  });

  it('asks for at least one library', async () => {
    const res = await agent.get('/admin/contributions-batch');
    expect(res.status).toBe(422);
    expect(res.text).toContain('Select at least one library for the batch.');
  });

  it('shows every node before the write and writes nothing without the explicit confirmation', async () => {
    const page = await agent.get(`/admin/contributions-batch?slugs=${a.slug}&slugs=${b.slug}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`id="node-tags-${a.slug}"`);
    expect(page.text).toContain(`id="node-tags-${b.slug}"`);
    expect(page.text).toContain('2 of 2 selected libraries can be written now.');
    expect(page.text).not.toContain('id="write-unavailable"');
    fake.reset();
    const res = await agent
      .post('/admin/contributions-batch')
      .type('form')
      .send({ _csrf: csrf, slugs: [a.slug, b.slug] });
    expect(res.status).toBe(303);
    const back = await agent.get(res.headers.location);
    expect(back.text).toContain('Tick “I confirm these writes” to send them to the map database.');
    expect(fake.requests.filter((req) => req.endpoint !== 'query')).toEqual([]);
  });

  it('writes the confirmed batch in one changeset and reports each node', async () => {
    fake.reset();
    const res = await agent
      .post('/admin/contributions-batch')
      .type('form')
      .send({ _csrf: csrf, slugs: [a.slug, b.slug], confirm_write: 'yes' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/admin/contributions');
    const page = await agent.get('/admin/contributions');
    expect(page.text).toContain('Batch write: 2 of 2 libraries written in 1 changeset(s).');
    expect(fake.changesets.size).toBe(1);
    const [changeset] = [...fake.changesets.values()];
    expect(changeset.nodeIds).toHaveLength(2);
    for (const id of changeset.nodeIds) expect(page.text).toContain(`node ${id} in changeset`);
  });
});
