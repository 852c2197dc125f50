/**
 * The staff console in a real browser (Chromium through playwright-core) against the real app on a loopback port and
 * a real PostgreSQL database: sign-in, every moderation task, the map-contribution workflow against the loopback fake
 * map server, refusals (non-staff, signed out, missing CSRF token), and every page at 375 px and 1280 px wide.
 */
import type { Page } from 'playwright-core';
import request from 'supertest';
import { registerUser, TEST_PASSWORD } from '../support/auth.js';
import { itWithDatabaseServer } from '../support/app.js';
import {
  checkPage,
  clickAndLoad,
  DESKTOP,
  describeWithBrowser,
  flashText,
  PHONE,
  serve,
  signIn,
  statusLogged,
  visit,
  type Viewport,
  useBrowser,
} from '../support/browser.js';
import { getAs, insertReport, postPhoto } from '../support/community.js';
import { withClient } from '../support/database.js';
import { createLibrary, multipart } from '../support/libraries.js';
import {
  adminPost,
  checkPasses,
  moderate,
  submitLibrary,
  writeEnv,
  mapSuite,
} from '../map-contribution/helpers.js';

const CSRF_REFUSAL =
  'This form has expired or did not come from this console. Reload the page and try again.';

describeWithBrowser('staff console in a browser', () => {
  // The browser first (it closes first): its keep-alive connections would hold the app's server open.
  const browser = useBrowser();
  const { fake, db, t, staff, owner, startApp } = mapSuite();
  let baseUrl: string;

  beforeAll(async () => {
    baseUrl = await serve(t);
  });

  /** A page of a fresh browser context (closed after the test), signed in as staff unless told otherwise. */
  async function staffPage(
    viewport: Viewport = DESKTOP,
    signedIn = true,
    base = baseUrl,
  ): Promise<Page> {
    const page = await browser.newPage(base, viewport);
    if (signedIn) {
      await signIn(page, staff.username, TEST_PASSWORD);
      expect(new URL(page.url()).pathname).toBe('/admin');
    }
    return page;
  }

  const publicDetail = (slug: string) => getAs(t.http, `/libraries/${slug}`);

  /** A library of owner's, approved through the moderation API. */
  async function approvedLibrary(fields: Record<string, string | number> = {}) {
    const created = await createLibrary(t.http, owner.access, fields);
    await moderate(t.http, staff, created.slug, { status: 'approved' });
    return created;
  }

  /** An approved library with an owner edit waiting for review (the new name and city are staged). */
  async function libraryWithStagedEdit(
    name: string,
    city: string,
    staged: { name: string; city: string },
  ) {
    const library = await approvedLibrary({ name, city });
    const edit = await multipart(
      request(t.http).patch(`/api/v1/libraries/${library.slug}`),
      staged,
      null,
      owner.access,
    );
    expect(edit.status).toBe(200);
    return library;
  }

  /** An approved, opted-in library whose duplicate check passed (eligible for a write). */
  async function eligibleLibrary(name: string) {
    const lib = await submitLibrary(t.http, owner, staff, { name });
    await checkPasses(t.http, staff, lib.slug);
    return lib;
  }

  const nodeCreates = () => fake.requests.filter((req) => req.endpoint === 'node.create');

  it('the page checks themselves catch overflow, unlabelled controls, console errors and CSP violations', async () => {
    const page = await staffPage(PHONE, false);
    // A page of this origin under the console's CSP, served by the browser itself (the app never sees it).
    const csp = (await request(t.http).get('/admin/login')).headers['content-security-policy'];
    await page.route('**/admin/self-test', (route) =>
      route.fulfill({
        status: 200,
        headers: { 'content-type': 'text/html', 'content-security-policy': csp },
        body:
          '<!doctype html><html><body><h1>Self test</h1>' +
          `<pre>${'x'.repeat(400)}</pre>` +
          '<input name="unlabelled"><button></button>' +
          '<script>console.error("inline ran")</script></body></html>',
      }),
    );
    await visit(page, '/admin/self-test');
    const failure = await checkPage(page, 'self-test').then(
      () => null,
      (error: Error) => error.message,
    );
    expect(failure).toContain('scrollWidth');
    expect(failure).toContain('input name=\\"unlabelled\\"');
    expect(failure).toContain('<button></button>');
    expect(failure).toContain('Executing inline script violates');
    expect(failure).toContain('script-src-elem blocked inline');
  });

  describe('signing in', () => {
    it('a staff member signs in through the form, sees the dashboard with its chart and signs out', async () => {
      await approvedLibrary({ name: 'Chart Point' });
      const page = await staffPage(DESKTOP, false);
      await visit(page, '/admin/login');
      await checkPage(page, 'flow-login');
      await page.getByLabel('Username or email').fill(staff.username);
      await page.getByLabel('Password').fill(TEST_PASSWORD);
      const res = await clickAndLoad(page, page.getByRole('button', { name: 'Sign in' }));

      expect([res.status(), new URL(page.url()).pathname]).toEqual([200, '/admin']);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
        'Dashboard',
      );
      for (const id of ['pending-libraries', 'pending-photos', 'open-reports']) {
        expect(await page.locator(`#${id}`).textContent()).toMatch(/^\d+$/);
      }
      const chart = page.locator('svg.chart');
      expect(await chart.isVisible()).toBe(true);
      expect(await chart.getAttribute('aria-label')).toMatch(/Approved libraries, cumulative/);
      expect(await page.locator('svg.chart polyline.chart-line').count()).toBe(1);
      await checkPage(page, 'flow-dashboard');

      await clickAndLoad(page, page.getByRole('button', { name: 'Sign out' }));
      expect(new URL(page.url()).pathname).toBe('/admin/login');
      expect(await flashText(page)).toBe('Signed out.');
      // The session is gone: the console sends the visitor back to the sign-in form.
      await visit(page, '/admin');
      expect(new URL(page.url()).pathname).toBe('/admin/login');
    });

    it('a user who is not staff is refused at sign-in with the reason', async () => {
      const reader = await registerUser(t.http);
      const page = await staffPage(DESKTOP, false);
      const res = await signIn(page, reader.username, TEST_PASSWORD);

      expect([res.status(), new URL(page.url()).pathname]).toEqual([403, '/admin/login']);
      expect(await page.getByRole('alert').textContent()).toContain('Staff access required.');
      expect(await page.getByRole('button', { name: 'Sign in' }).isVisible()).toBe(true);
      await checkPage(page, 'flow-login-refused', { allowConsole: [statusLogged(403)] });

      await visit(page, '/admin/libraries');
      expect(new URL(page.url()).pathname).toBe('/admin/login');
    });

    it('a wrong password is refused with the invalid-credentials message', async () => {
      const page = await staffPage(DESKTOP, false);
      const res = await signIn(page, staff.username, 'Not-The-Password-1');

      expect([res.status(), new URL(page.url()).pathname]).toEqual([401, '/admin/login']);
      expect(await page.getByRole('alert').textContent()).toMatch(/\S/);
      expect(await page.getByLabel('Username or email').inputValue()).toBe(staff.username);
      await checkPage(page, 'flow-login-wrong-password', { allowConsole: [statusLogged(401)] });
    });

    it('a signed-out visitor is sent to the sign-in page, and back to the page after signing in', async () => {
      const page = await staffPage(DESKTOP, false);
      await visit(page, '/admin/libraries?status=approved');
      const url = new URL(page.url());
      expect([url.pathname, url.searchParams.get('next')]).toEqual([
        '/admin/login',
        '/admin/libraries?status=approved',
      ]);
      await checkPage(page, 'flow-login-redirected');

      await page.getByLabel('Username or email').fill(staff.email);
      await page.getByLabel('Password').fill(TEST_PASSWORD);
      await clickAndLoad(page, page.getByRole('button', { name: 'Sign in' }));
      const after = new URL(page.url());
      expect([after.pathname, after.search]).toEqual(['/admin/libraries', '?status=approved']);
    });
  });

  describe('moderation', () => {
    it('approves a pending library, which the public API then serves', async () => {
      const library = await createLibrary(t.http, owner.access, { name: 'Shelf Awaiting Review' });
      expect((await publicDetail(library.slug)).status).toBe(404);

      const page = await staffPage();
      await visit(page, '/admin/libraries');
      await checkPage(page, 'flow-libraries-pending');
      await clickAndLoad(page, page.getByRole('link', { name: 'Shelf Awaiting Review' }));
      expect(new URL(page.url()).pathname).toBe(`/admin/libraries/${library.slug}`);
      await clickAndLoad(page, page.getByRole('button', { name: 'Approve library' }));

      expect(new URL(page.url()).pathname).toBe(`/admin/libraries/${library.slug}`);
      expect(await flashText(page)).toBe('Library approved: it is now public.');
      expect(await page.locator('h1 .badge').textContent()).toBe('approved');
      await checkPage(page, 'flow-library-approved');

      const published = await publicDetail(library.slug);
      expect([published.status, published.body.slug, published.body.name]).toEqual([
        200,
        library.slug,
        'Shelf Awaiting Review',
      ]);
    });

    it('rejects a library with a reason the submitter is shown', async () => {
      const library = await createLibrary(t.http, owner.access, { name: 'Not A Bookcase' });
      const page = await staffPage();
      await visit(page, `/admin/libraries/${library.slug}`);
      await page
        .getByLabel('Rejection reason (shown to the submitter)')
        .fill('This is a bus stop, not a bookcase.');
      await clickAndLoad(page, page.getByRole('button', { name: 'Reject library' }));

      expect(await flashText(page)).toBe('Library rejected.');
      expect(await page.locator('h1 .badge').textContent()).toBe('rejected');
      const mine = await getAs(t.http, '/libraries/mine?page_size=50', owner.access);
      const item = mine.body.items.find((entry: { slug: string }) => entry.slug === library.slug);
      expect([item.status, item.rejection_reason]).toEqual([
        'rejected',
        'This is a bus stop, not a bookcase.',
      ]);
      expect((await publicDetail(library.slug)).status).toBe(404);
    });

    it('rejects a staged owner edit: the library keeps its published values', async () => {
      const library = await libraryWithStagedEdit('Original Shelf', 'Keepton', {
        name: 'Renamed By Owner',
        city: 'Elsewhere',
      });
      const page = await staffPage();
      await visit(page, `/admin/libraries/${library.slug}`);

      const diff = page.locator('table.diff');
      expect(await diff.isVisible()).toBe(true);
      const rows = await diff
        .locator('tbody tr')
        .evaluateAll((trs) =>
          trs.map((tr) =>
            Array.from(
              (tr as unknown as { cells: ArrayLike<{ textContent: string | null }> }).cells,
            ).map((cell) => (cell.textContent ?? '').trim()),
          ),
        );
      expect(rows).toEqual(
        expect.arrayContaining([
          ['name', 'Original Shelf', 'Renamed By Owner'],
          ['city', 'Keepton', 'Elsewhere'],
        ]),
      );
      await checkPage(page, 'flow-library-staged');

      await clickAndLoad(page, page.getByRole('button', { name: 'Reject staged changes' }));
      expect(await flashText(page)).toBe('Staged changes rejected: the library is unchanged.');
      expect(await page.locator('table.diff').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Apply staged changes' }).count()).toBe(0);

      const published = await publicDetail(library.slug);
      expect([published.status, published.body.name, published.body.city]).toEqual([
        200,
        'Original Shelf',
        'Keepton',
      ]);
      const staffView = await getAs(t.http, `/libraries/moderation/${library.slug}`, staff.access);
      expect(staffView.body.pending_changes).toBeNull();
    });

    it('approves a community photo, which then shows on the public library', async () => {
      const library = await approvedLibrary({ name: 'Photo Corner' });
      const posted = await postPhoto(t.http, owner.access, library.slug, {
        caption: 'Freshly painted',
      });
      expect(posted.status).toBe(201);
      const photoId = posted.body.id as number;
      expect((await publicDetail(library.slug)).body.photos).toEqual([]);

      const page = await staffPage();
      await visit(page, '/admin/photos');
      const card = page.locator(`#photo-${photoId}`);
      // The thumbnail is served (a lazy image: scrolled to, then decoded).
      const thumbnail = card.locator('img');
      await thumbnail.scrollIntoViewIfNeeded();
      const decodedWidth = await thumbnail.evaluate((img) => {
        const el = img as unknown as { decode(): Promise<void>; naturalWidth: number };
        return el.decode().then(() => el.naturalWidth);
      });
      expect(decodedWidth).toBeGreaterThan(0);
      await checkPage(page, 'flow-photos-pending');
      await clickAndLoad(page, page.getByRole('button', { name: `Approve photo #${photoId}` }));

      expect(new URL(page.url()).pathname).toBe('/admin/photos');
      expect(await flashText(page)).toBe(`Photo #${photoId} of “Photo Corner” is now approved.`);
      // The pending queue no longer holds it.
      expect(await page.locator(`#photo-${photoId}`).count()).toBe(0);
      const published = await publicDetail(library.slug);
      expect(published.body.photos.map((photo: { id: number }) => photo.id)).toEqual([photoId]);
    });

    it('resolves a report', async () => {
      const library = await approvedLibrary({ name: 'Damaged Door' });
      const reportId = await insertReport(db.url, {
        library_id: library.id,
        created_by: owner.id,
        reason: 'damaged',
        details: 'The door hinge is broken.',
      });

      const page = await staffPage();
      await visit(page, '/admin/reports');
      expect(await page.locator(`#report-${reportId}`).textContent()).toContain(
        'The door hinge is broken.',
      );
      await checkPage(page, 'flow-reports-open');
      await clickAndLoad(page, page.getByRole('button', { name: `Resolve report #${reportId}` }));

      expect(await flashText(page)).toBe(`Report #${reportId} on “Damaged Door” is now resolved.`);
      expect(await page.locator(`#report-${reportId}`).count()).toBe(0);
      const status = await withClient(db.url, async (client) => {
        const { rows } = await client.query('SELECT status FROM reports WHERE id = $1', [reportId]);
        return rows[0]?.status as string;
      });
      expect(status).toBe('resolved');

      await visit(page, '/admin/reports?status=resolved');
      expect(
        await page.getByRole('button', { name: `Reopen report #${reportId}` }).isVisible(),
      ).toBe(true);
    });
  });

  describe('map contribution', () => {
    it('checks, previews, confirms and writes one node to the fake map server', async () => {
      const lib = await submitLibrary(t.http, owner, staff, { name: 'Lesekiste am Brunnen' });
      const createsBefore = nodeCreates().length;
      const page = await staffPage();

      await visit(page, '/admin/contributions');
      await clickAndLoad(page, page.getByRole('link', { name: 'Lesekiste am Brunnen' }));
      expect(new URL(page.url()).pathname).toBe(`/admin/contributions/${lib.slug}`);
      await clickAndLoad(page, page.getByRole('button', { name: 'Run duplicate check' }));
      expect(await flashText(page)).toBe('Duplicate check done: no match.');
      expect(await page.locator('#contribution-state').textContent()).toBe('no match');
      expect(fake.requests.at(-1)?.endpoint).toBe('query');
      await checkPage(page, 'flow-contribution-checked');

      await clickAndLoad(page, page.getByRole('link', { name: 'Preview the write' }));
      expect(new URL(page.url()).pathname).toBe(`/admin/contributions/${lib.slug}/preview`);
      await page.getByLabel('Name is the real on-site name').check();
      await clickAndLoad(page, page.getByRole('button', { name: 'Update preview' }));
      const nodeTags = await tagsOf(page, '#node-tags');
      expect(nodeTags).toMatchObject({ amenity: 'public_bookcase', name: 'Lesekiste am Brunnen' });
      expect(Object.keys(await tagsOf(page, '#changeset-tags'))).toEqual(
        expect.arrayContaining(['comment', 'created_by', 'source']),
      );
      await checkPage(page, 'flow-preview');

      await clickAndLoad(page, page.getByRole('button', { name: 'Continue to confirmation' }));
      expect(new URL(page.url()).pathname).toBe(`/admin/contributions/${lib.slug}/confirm`);
      expect(await page.locator('#write-unavailable').count()).toBe(0);
      expect(await tagsOf(page, '#node-tags')).toEqual(nodeTags);
      const write = page.getByRole('button', { name: 'Write to the map database' });
      expect(await write.isEnabled()).toBe(true);
      // Nothing is sent before the explicit confirmation.
      expect(nodeCreates().length).toBe(createsBefore);
      await page.getByLabel('I confirm this write: I inspected the map and the tags above').check();
      await checkPage(page, 'flow-confirm');
      await clickAndLoad(page, write);

      expect(new URL(page.url()).pathname).toBe(`/admin/contributions/${lib.slug}`);
      const creates = nodeCreates().slice(createsBefore);
      expect(creates).toHaveLength(1);
      const node = [...fake.nodes.values()].find((n) => n.tags.name === 'Lesekiste am Brunnen');
      expect(node).toBeDefined();
      expect(node!.tags).toEqual(nodeTags);
      expect(await flashText(page)).toBe(
        `Written to the map database: node ${node!.id} in changeset ${node!.changesetId}.`,
      );
      expect(await page.locator('#element').textContent()).toContain(
        `node ${node!.id} · changeset ${node!.changesetId}`,
      );
      expect(await page.locator('#contribution-state').textContent()).toBe('contributed');
      await checkPage(page, 'flow-contribution-written');
    });

    it('withdraws the submitter’s permission after the explicit confirmation', async () => {
      const lib = await submitLibrary(t.http, owner, staff, { name: 'Withdrawn Shelf' });
      const page = await staffPage();
      await visit(page, `/admin/contributions/${lib.slug}`);
      expect(await page.locator('#permission').textContent()).toBe('given');

      await page.getByLabel('I understand this cannot be undone').check();
      await clickAndLoad(page, page.getByRole('button', { name: 'Withdraw permission' }));

      expect(await flashText(page)).toBe(
        'Permission withdrawn: this library will never be contributed.',
      );
      expect(await page.locator('#permission').textContent()).toBe('not given');
      expect(await page.getByRole('button', { name: 'Withdraw permission' }).count()).toBe(0);
      expect(await page.locator('#blockers').textContent()).toMatch(/\S/);
      await checkPage(page, 'flow-contribution-withdrawn');
    });

    itWithDatabaseServer(
      'with writes disabled, the confirmation page shows why and its button is disabled',
      async () => {
        const lib = await eligibleLibrary('Kill Switch Shelf');
        const off = await startApp({ env: writeEnv(fake, { MAPDB_WRITE_ENABLED: 'false' }) });
        try {
          const offUrl = await serve(off);
          const createsBefore = nodeCreates().length;
          const page = await staffPage(DESKTOP, true, offUrl);
          await visit(page, `/admin/contributions/${lib.slug}/confirm`);

          const unavailable = page.locator('#write-unavailable');
          expect(await unavailable.isVisible()).toBe(true);
          expect(await unavailable.textContent()).toContain('writes_disabled');
          const write = page.getByRole('button', { name: 'Write to the map database' });
          expect(await write.isDisabled()).toBe(true);
          expect(await write.getAttribute('aria-describedby')).toBe('write-unavailable');
          expect(
            await page
              .getByLabel('I confirm this write: I inspected the map and the tags above')
              .isDisabled(),
          ).toBe(true);
          await checkPage(page, 'flow-confirm-disabled');
          expect(nodeCreates().length).toBe(createsBefore);
          await page.context().close();
        } finally {
          await off.close();
        }
      },
    );
  });

  describe('CSRF', () => {
    it('a form submitted without its CSRF token is refused and changes nothing', async () => {
      const library = await createLibrary(t.http, owner.access, { name: 'Forged Approval' });
      const page = await staffPage();
      await visit(page, `/admin/libraries/${library.slug}`);
      const approve = page.locator('form').filter({
        has: page.getByRole('button', { name: 'Approve library' }),
      });
      await approve.locator('input[name="_csrf"]').evaluate((input) => {
        (input as unknown as { remove(): void }).remove();
      });
      expect(await approve.locator('input[name="_csrf"]').count()).toBe(0);

      const res = await clickAndLoad(page, page.getByRole('button', { name: 'Approve library' }));
      expect(res.status()).toBe(403);
      expect(await page.locator('.lead').textContent()).toBe(CSRF_REFUSAL);
      await checkPage(page, 'flow-csrf-refused', { allowConsole: [statusLogged(403)] });
      expect((await publicDetail(library.slug)).status).toBe(404);
    });

    it('a POST with the session cookie but no or a wrong token is refused; the right token works', async () => {
      const library = await createLibrary(t.http, owner.access, { name: 'Scripted Approval' });
      const page = await staffPage();
      await visit(page, `/admin/libraries/${library.slug}`);
      const token = await page.locator('input[name="_csrf"]').first().inputValue();
      const path = `/admin/libraries/${library.slug}/status`;
      const post = (form: Record<string, string>) =>
        page.request.post(path, { form, maxRedirects: 0 });

      const missing = await post({ status: 'approved' });
      expect([missing.status(), await missing.text()]).toEqual([
        403,
        expect.stringContaining(CSRF_REFUSAL),
      ]);
      const wrong = await post({ status: 'approved', _csrf: `${token.slice(0, -1)}x` });
      expect(wrong.status()).toBe(403);
      expect((await publicDetail(library.slug)).status).toBe(404);

      // The same request with the session's token goes through: the refusals were the token's.
      const right = await post({ status: 'approved', _csrf: token });
      expect([right.status(), right.headers().location]).toEqual([
        303,
        `/admin/libraries/${library.slug}`,
      ]);
      expect((await publicDetail(library.slug)).status).toBe(200);
    });
  });

  describe.each([
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ])('every page on a %s', (_label, viewport) => {
    let pending: { slug: string };
    let staged: { slug: string };
    let candidate: { slug: string };
    let eligible: { slug: string };

    beforeAll(async () => {
      pending = await createLibrary(t.http, owner.access, {
        name: 'Ein sehr langer Name eines Bücherschranks am Rande der Altstadt neben dem Brunnen',
      });
      await postPhoto(t.http, owner.access, (await approvedLibrary({ name: 'Gallery' })).slug);
      const reported = await approvedLibrary({ name: 'Reported Shelf' });
      await insertReport(db.url, {
        library_id: reported.id,
        created_by: owner.id,
        reason: 'incorrect_info',
        details: 'The opening hours on the sign are different: Mo–Fr 8–18, Sa 9–13.',
      });
      staged = await libraryWithStagedEdit('Before Edit', 'Oldtown', {
        name: 'After Edit',
        city: 'Newtown',
      });
      eligible = await eligibleLibrary('Preview Shelf');
      // A possible duplicate: the map already has a bookcase a few metres away.
      const dup = await submitLibrary(t.http, owner, staff, { name: 'Doubtful Shelf' });
      fake.seedQuery({
        type: 'node',
        id: 77_000 + (viewport.width % 1000),
        lat: dup.lat + 0.0001,
        lon: dup.lng,
        tags: { amenity: 'public_bookcase', name: 'Doubtful Shelf' },
      });
      const checked = await adminPost(t.http, staff.access, `/${dup.slug}/check`);
      expect(checked.body.status).toBe('possible_duplicate');
      candidate = dup;
    });

    it('has no horizontal overflow, a label on every control and no console error', async () => {
      const page = await staffPage(viewport, false);
      await visit(page, '/admin/login');
      await checkPage(page, 'login');
      await signIn(page, staff.username, TEST_PASSWORD);

      const pages: [string, string][] = [
        ['dashboard', '/admin'],
        ['libraries', '/admin/libraries'],
        ['libraries-filtered', '/admin/libraries?status=all&country=DE&q=Shelf'],
        ['library-pending', `/admin/libraries/${pending.slug}`],
        ['library-staged', `/admin/libraries/${staged.slug}`],
        ['photos', '/admin/photos'],
        ['reports', '/admin/reports'],
        ['contributions', '/admin/contributions'],
        ['contributions-eligible', '/admin/contributions?status=&eligible=true'],
        ['contribution-candidates', `/admin/contributions/${candidate.slug}`],
        ['contribution', `/admin/contributions/${eligible.slug}`],
        ['preview', `/admin/contributions/${eligible.slug}/preview?verified_name=true`],
        ['confirm', `/admin/contributions/${eligible.slug}/confirm?verified_name=true`],
        ['audit', '/admin/audit'],
      ];
      for (const [name, path] of pages) {
        const res = await visit(page, path);
        expect([name, res.status()]).toEqual([name, 200]);
        expect(await page.locator('h1').count()).toBe(1);
        await checkPage(page, name);
      }
      // The candidate's resolve form is on the page (its radios and reason are labelled, as checked above).
      await visit(page, `/admin/contributions/${candidate.slug}`);
      expect(await page.locator('#contribution-state').textContent()).toBe('possible duplicate');
      expect(await page.getByRole('button', { name: 'Record resolution' }).count()).toBe(1);

      const missing = await visit(page, '/admin/libraries/no-such-library');
      expect(missing.status()).toBe(404);
      await checkPage(page, 'error-404', { allowConsole: [statusLogged(404)] });
    });
  });
});

/** The key → value rows of a tags table. */
async function tagsOf(page: Page, selector: string): Promise<Record<string, string>> {
  const rows = await page.locator(`${selector} tbody tr`).evaluateAll((trs) =>
    trs.map((tr) => {
      const cells = (tr as unknown as { cells: ArrayLike<{ textContent: string | null }> }).cells;
      return [(cells[0]?.textContent ?? '').trim(), (cells[1]?.textContent ?? '').trim()];
    }),
  );
  return Object.fromEntries(rows);
}
