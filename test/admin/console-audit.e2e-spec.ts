/**
 * Issue 18 in the staff console: the staff edit form (multipart, CSRF token in the action), the warning before
 * approving a library with a blank name or description, each library's history, the audit page with every kind of
 * decision and the map-contribution events, and the duplicate check shown disabled without MAPDB_QUERY_URL.
 */
import request from 'supertest';
import { call } from '../support/community.js';
import { takeEveryDecision } from '../support/decisions.js';
import { createLibrary, insertLibrary, jpeg, libraryRow } from '../support/libraries.js';
import { signInConsole, type ConsoleAgent } from '../support/console.js';
import { AUDIT_KINDS } from '../../src/moderation-audit/dto/moderation-audit.dto.js';
import { StaffService } from '../../src/users/staff.service.js';
import { useTestSuite } from '../support/suite.js';

describe('staff console: edit, audit history, duplicate check availability', () => {
  let agent: ConsoleAgent;
  let csrf: string;

  const { db, t, staff, alice } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { staff: 'staff', alice: 'user' },
  });

  beforeAll(async () => {
    ({ agent, csrf } = await signInConsole(t.http, staff));
  });

  const editForm = (slug: string, fields: Record<string, string>, token: string | null = csrf) => {
    let req = agent.post(
      `/admin/libraries/${slug}/edit${token === null ? '' : `?_csrf=${encodeURIComponent(token)}`}`,
    );
    for (const [name, value] of Object.entries(fields)) req = req.field(name, value);
    return req;
  };

  it('the edit form changes any field, replaces the photo, and the library page shows the before/after', async () => {
    const created = await createLibrary(t.http, alice.access, { name: 'Old Name', capacity: 12 });
    const page = await agent.get(`/admin/libraries/${created.slug}`);
    expect(page.text).toContain('id="edit-heading"');
    expect(page.text).toContain('No staff decision about this library yet.');

    const res = await editForm(created.slug, {
      name: 'New Name',
      description: created.description as string,
      city: 'Freiburg',
      country: 'DE',
      latitude: String(created.lat),
      longitude: String(created.lng),
      capacity: '',
      is_indoor: 'true',
      is_lit: '',
      wheelchair_accessible: 'limited',
    }).attach('photo', await jpeg(90, 60), { filename: 'new.jpg', contentType: 'image/jpeg' });
    expect([res.status, res.headers.location]).toEqual([303, `/admin/libraries/${created.slug}`]);
    const row = await libraryRow(db.url, created.slug);
    expect(row).toMatchObject({
      name: 'New Name',
      capacity: null,
      is_indoor: true,
      wheelchair_accessible: 'limited',
    });
    expect((await request(t.http).get(created.photo_url as string)).status).toBe(404);

    const after = await agent.get(`/admin/libraries/${created.slug}`);
    expect(after.text).toContain('Library saved.');
    expect(after.text).toContain('library edited');
    expect(after.text).toMatch(
      /<strong>name<\/strong>: <span class="old">&quot;Old Name&quot;<\/span> → <span class="new">&quot;New Name&quot;<\/span>/,
    );
    expect(after.text).toContain('photo replaced');
  });

  it('refuses the edit form without the CSRF token, changing nothing', async () => {
    const created = await createLibrary(t.http, alice.access, { name: 'Guarded' });
    const res = await editForm(created.slug, { name: 'Forged' }, null);
    expect(res.status).toBe(403);
    expect((await libraryRow(db.url, created.slug))?.name).toBe('Guarded');
  });

  it('warns before approving a library with a blank name, offering to fill it; "approve anyway" approves', async () => {
    const created = await createLibrary(t.http, alice.access, { name: '' });
    const warned = await agent
      .post(`/admin/libraries/${created.slug}/status`)
      .type('form')
      .send({ _csrf: csrf, status: 'approved' });
    expect(warned.status).toBe(200);
    expect(warned.text).toContain('id="blank-warning"');
    expect(warned.text).toContain('Fill them in by hand');
    expect(warned.text).toContain('AI enrichment is not configured.');
    expect((await libraryRow(db.url, created.slug))?.status).toBe('pending');

    const enrich = await agent
      .post(`/admin/libraries/${created.slug}/enrich`)
      .type('form')
      .send({ _csrf: csrf });
    expect(enrich.status).toBe(303);
    expect((await agent.get(enrich.headers.location)).text).toContain(
      'AI enrichment is not configured: fill the name and description by hand.',
    );

    const approved = await agent
      .post(`/admin/libraries/${created.slug}/status`)
      .type('form')
      .send({ _csrf: csrf, status: 'approved', confirm_blank: 'yes' });
    expect(approved.status).toBe(303);
    expect((await libraryRow(db.url, created.slug))?.status).toBe('approved');
  });

  it('the audit page shows every kind of decision and the map-contribution events, filterable', async () => {
    const created = await createLibrary(t.http, alice.access, { city: 'Consoleaudit' });
    const slug = created.slug;
    const patch = (body: object) =>
      call(t.http, 'patch', `/libraries/moderation/${slug}`, staff.access, body);
    await patch({ name: 'Edited in the API' }).expect(200);
    await takeEveryDecision(t.http, db.url, created, { staff, owner: alice }, 'Private.');
    const staffService = t.app.get(StaffService);
    await staffService.createOrPromote({
      username: 'cli-made',
      email: 'cli-made@example.com',
      password: 'a-long-passphrase',
    });
    await staffService.createOrPromote({
      username: 'cli-made',
      email: 'cli-made@example.com',
      password: 'another-passphrase',
    });
    const optedIn = await insertLibrary(db.url, {
      name: 'Opted In',
      submission_origin: 'user',
      created_by: alice.id,
      mapdb_submission_allowed: true,
    });
    await call(
      t.http,
      'post',
      `/admin/map-contributions/${optedIn.slug}/withdraw`,
      staff.access,
      {},
    ).expect(200);

    const page = await agent.get('/admin/audit?page_size=50');
    expect(page.status).toBe(200);
    const kinds = [...page.text.matchAll(/<tr data-kind="([a-z_]+)">/g)].map((match) => match[1]);
    expect(new Set(kinds)).toEqual(new Set(AUDIT_KINDS));
    expect(page.text).toContain('id="events-heading"');
    expect(page.text).toContain('permission withdrawal');
    expect(page.text).toContain('account cli-made');
    expect(page.text).toContain('command line');

    const onlyRejections = await agent.get('/admin/audit?kind=library_rejected&actor=&library=');
    expect(
      [...onlyRejections.text.matchAll(/<tr data-kind="([a-z_]+)">/g)].map((m) => m[1]),
    ).toEqual(['library_rejected']);
    expect(onlyRejections.text).not.toContain('id="events-heading"');
    const mapOnly = await agent.get('/admin/audit?kind=map_contribution');
    expect(mapOnly.text).not.toContain('id="decisions-heading"');
    expect(mapOnly.text).toContain('permission withdrawal');
    const oneLibrary = await agent.get(`/admin/audit?library=${optedIn.slug}`);
    expect(oneLibrary.text).toContain('No decisions match these filters.');
    expect(oneLibrary.text).toContain('permission withdrawal');
    const paged = await agent.get(`/admin/audit?library=${slug}&page_size=5&page=2`);
    expect(paged.text).toContain('Page 2 of 3');

    const bad = await agent.get('/admin/audit?kind=everything');
    expect(bad.status).toBe(422);
  });

  it('shows "Run duplicate check" disabled with the reason when MAPDB_QUERY_URL is not set', async () => {
    const library = await insertLibrary(db.url, { name: 'Unchecked' });
    const page = await agent.get(`/admin/contributions/${library.slug}`);
    expect(page.text).toMatch(
      /<button type="submit" disabled aria-describedby="check-unavailable">Run duplicate check<\/button>/,
    );
    expect(page.text).toContain('MAPDB_QUERY_URL is not configured');
    const res = await agent
      .post(`/admin/contributions/${library.slug}/check`)
      .type('form')
      .send({ _csrf: csrf });
    expect(res.status).toBe(303);
    const after = await agent.get(res.headers.location);
    expect(after.text).toContain(
      'The duplicate check is unavailable: MAPDB_QUERY_URL is not configured.',
    );
    expect(after.text).not.toContain('Duplicate check done');
  });
});
