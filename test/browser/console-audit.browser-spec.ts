/**
 * Issue 18 in Chromium: the staff edit form, the warning before approving a library without a name, the library's
 * history and the audit page (every decision, filterable), a rejected photo leaving public view, at phone and
 * desktop widths.
 */
import type { Page } from 'playwright-core';
import request from 'supertest';
import { TEST_PASSWORD } from '../support/auth.js';
import {
  checkPage,
  clickAndLoad,
  DESKTOP,
  describeWithBrowser,
  flashText,
  PHONE,
  serve,
  signIn,
  visit,
  type Viewport,
  useBrowser,
} from '../support/browser.js';
import { call, getAs, insertReport, postPhoto } from '../support/community.js';
import { createLibrary } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

describeWithBrowser('staff console in a browser: edit and audit trail', () => {
  const browser = useBrowser();
  const { db, t, staff, owner } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { staff: 'staff', owner: 'user' },
  });
  let baseUrl: string;

  beforeAll(async () => {
    baseUrl = await serve(t);
  });

  async function staffPage(viewport: Viewport = DESKTOP): Promise<Page> {
    const page = await browser.newPage(baseUrl, viewport);
    await signIn(page, staff.username, TEST_PASSWORD);
    return page;
  }

  const decisionKinds = (page: Page) =>
    page
      .locator('table.decisions tbody tr')
      .evaluateAll((rows) =>
        rows.map((row) => (row as unknown as { dataset: { kind: string } }).dataset.kind),
      );

  it('warns before approving a nameless library; staff fill the name in the edit form, and the history shows it', async () => {
    const library = await createLibrary(t.http, owner.access, { name: '', capacity: 5 });
    const page = await staffPage();
    await visit(page, `/admin/libraries/${library.slug}`);
    await checkPage(page, 'issue18-library-edit-form');
    await clickAndLoad(page, page.getByRole('button', { name: 'Approve library' }));
    expect(await page.locator('#blank-warning').textContent()).toContain('no name');
    expect(await page.getByText('AI enrichment is not configured.').count()).toBe(1);
    await checkPage(page, 'issue18-approve-blank');

    await clickAndLoad(page, page.getByRole('link', { name: 'Fill them in by hand' }));
    await page.getByLabel('Name', { exact: true }).fill('Bücherschrank am Brunnen');
    await page.getByLabel('Capacity').fill('30');
    await clickAndLoad(page, page.getByRole('button', { name: 'Save changes' }));
    expect(await flashText(page)).toBe('Library saved.');
    expect(await page.locator('h1').textContent()).toContain('Bücherschrank am Brunnen');

    // Now named: approving needs no confirmation.
    await clickAndLoad(page, page.getByRole('button', { name: 'Approve library' }));
    expect(await flashText(page)).toBe('Library approved: it is now public.');
    expect(await decisionKinds(page)).toEqual(['library_approved', 'library_edited']);
    const edited = page.locator('tr[data-kind="library_edited"]');
    expect(await edited.textContent()).toContain('name: "" → "Bücherschrank am Brunnen"');
    expect(await edited.textContent()).toContain('capacity: 5 → 30');
    expect(await edited.textContent()).toContain(staff.username);
    const published = await getAs(t.http, `/libraries/${library.slug}`);
    expect([published.status, published.body.name]).toEqual([200, 'Bücherschrank am Brunnen']);
  });

  it('a photo rejected in the console stops being served; the audit page lists it and filters by kind', async () => {
    const library = await createLibrary(t.http, owner.access, { name: 'Gallery Shelf' });
    await call(t.http, 'patch', `/libraries/moderation/${library.slug}`, staff.access, {
      status: 'approved',
    }).expect(200);
    const posted = await postPhoto(t.http, owner.access, library.slug);
    const approved = await call(
      t.http,
      'patch',
      `/libraries/moderation/photos/${posted.body.id}`,
      staff.access,
      { status: 'approved' },
    );
    const photoUrl = approved.body.photo_url as string;
    expect((await request(t.http).get(photoUrl)).status).toBe(200);
    const report = await insertReport(db.url, { library_id: library.id });
    await call(t.http, 'patch', `/libraries/moderation/reports/${report}`, staff.access, {
      status: 'dismissed',
    }).expect(200);

    const page = await staffPage();
    await visit(page, '/admin/photos?status=approved');
    await clickAndLoad(page, page.getByRole('button', { name: `Reject photo #${posted.body.id}` }));
    expect(await flashText(page)).toContain('is now rejected');
    expect((await page.request.get(`${baseUrl}${photoUrl}`)).status()).toBe(404);
    await visit(page, '/admin/photos?status=rejected');
    await checkPage(page, 'issue18-photos-rejected');

    await visit(page, '/admin/audit');
    await checkPage(page, 'issue18-audit');
    const kinds = await decisionKinds(page);
    for (const kind of ['photo_rejected', 'report_dismissed', 'photo_approved', 'library_approved'])
      expect(kinds).toContain(kind);
    expect(await page.locator('#events-heading').count()).toBe(1);

    await page.getByLabel('Kind').selectOption('photo_rejected');
    await page.getByLabel('Library slug').fill(library.slug);
    await clickAndLoad(page, page.getByRole('button', { name: 'Filter' }));
    expect(await decisionKinds(page)).toEqual(['photo_rejected']);
    expect(await page.locator('#events-heading').count()).toBe(0);
  });

  it('the new pages fit a phone screen', async () => {
    const library = await createLibrary(t.http, owner.access, { name: '' });
    const page = await staffPage(PHONE);
    for (const [name, path] of [
      ['issue18-phone-library', `/admin/libraries/${library.slug}`],
      ['issue18-phone-audit', '/admin/audit'],
    ]) {
      const res = await visit(page, path);
      expect(res.status()).toBe(200);
      await checkPage(page, name);
    }
    await visit(page, `/admin/libraries/${library.slug}`);
    await clickAndLoad(page, page.getByRole('button', { name: 'Approve library' }));
    await checkPage(page, 'issue18-phone-approve-blank');
  });
});
