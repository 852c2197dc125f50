/**
 * The staff console over HTTP: sign-in (staff only), the cookie session (flags, idle expiry, sign-out, revocation),
 * CSRF and same-origin checks on every form, the security headers, escaping, filters and pagination, and the
 * moderation and map-contribution actions reaching the same services as the JSON API. The browser suite
 * (test/browser) drives the same pages in Chromium.
 */
import request from 'supertest';
import { makeStaff, registerUser, type RegisteredUser } from '../support/auth.js';
import { createTestApp, itWithDatabaseServer } from '../support/app.js';
import { insertCommunityPhoto, insertReport } from '../support/community.js';
import { withClient } from '../support/database.js';
import { insertLibrary } from '../support/libraries.js';
import { csrfOf, postSignInForm, signInConsole } from '../support/console.js';
import { useTestSuite } from '../support/suite.js';

const CSRF_REFUSAL = 'This form has expired or did not come from this console.';

const cookieNamed = (res: request.Response, name: string): string | undefined =>
  ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith(`${name}=`));

async function scalar<T>(databaseUrl: string, sql: string, params: unknown[] = []): Promise<T> {
  return withClient(databaseUrl, async (client) => {
    const { rows } = await client.query(sql, params);
    return Object.values(rows[0] ?? {})[0] as T;
  });
}

describe('staff console', () => {
  let staff: RegisteredUser;
  let reader: RegisteredUser;

  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  beforeAll(async () => {
    staff = await registerUser(t.http);
    await makeStaff(db.url, staff.id);
    reader = await registerUser(t.http);
  });

  const signIn = (user: RegisteredUser = staff, http = t.http) => signInConsole(http, user);

  describe('sign-in', () => {
    it('sends a visitor without a session to the sign-in form, keeping where they were going', async () => {
      const res = await request(t.http).get('/admin/libraries?status=all');
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/admin/login?next=%2Fadmin%2Flibraries%3Fstatus%3Dall');
    });

    it('serves the form with a strict CSP, no caching and a SameSite=Strict CSRF cookie', async () => {
      const res = await request(t.http).get('/admin/login');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      const csp = res.headers['content-security-policy'];
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['cache-control']).toBe('private, no-store');
      const cookie = cookieNamed(res, 'bookcase_console_signin')!;
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Strict/);
      expect(cookie).toMatch(/Path=\/admin/);
      expect(res.text).toContain('<label for="username">Username or email</label>');
      expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
      expect(res.text).not.toMatch(/\sstyle=/);
    });

    it('refuses a sign-in posted without the form token, and opens no session', async () => {
      const res = await request(t.http).post('/admin/login').type('form').send({
        username: staff.username,
        password: staff.password,
      });
      expect(res.status).toBe(403);
      expect(res.text).toContain(CSRF_REFUSAL);
      expect(cookieNamed(res, 'bookcase_console')).toBeUndefined();
    });

    it('answers bad credentials with 401 and the API message, the username kept and escaped', async () => {
      const { res } = await postSignInForm(t.http, {
        username: '<b>nobody</b>',
        password: 'wrong-password',
      });
      expect(res.status).toBe(401);
      expect(res.text).toContain('Invalid');
      expect(res.text).toContain('value="&lt;b&gt;nobody&lt;/b&gt;"');
      expect(cookieNamed(res, 'bookcase_console')).toBeUndefined();
    });

    it('refuses a valid account without staff rights with 403 "Staff access required."', async () => {
      const { agent, res } = await postSignInForm(t.http, {
        username: reader.email,
        password: reader.password,
      });
      expect(res.status).toBe(403);
      expect(res.text).toContain('Staff access required.');
      expect(cookieNamed(res, 'bookcase_console')).toBeUndefined();
      expect((await agent.get('/admin')).status).toBe(303);
    });

    it('signs staff in with an httpOnly, SameSite=Strict session cookie and goes to the page asked for', async () => {
      const { agent, form, res } = await postSignInForm(
        t.http,
        {
          username: staff.username,
          password: staff.password,
          next: '/admin/reports',
        },
        '/admin/login?next=%2Fadmin%2Freports',
      );
      expect(form.text).toContain('name="next" value="/admin/reports"');
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/admin/reports');
      const cookie = cookieNamed(res, 'bookcase_console')!;
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Strict/);
      expect(cookie).not.toMatch(/Secure/);
      const page = await agent.get('/admin/reports');
      expect(page.status).toBe(200);
      expect(page.text).toContain(`Signed in as <strong>${staff.username}</strong>`);
    });

    it.each([
      'https://evil.example/',
      '//evil.example/admin',
      '/api/v1/auth/me',
      'javascript:alert(1)',
    ])('never redirects outside the console after sign-in (next=%s)', async (next) => {
      const { res } = await postSignInForm(t.http, {
        username: staff.username,
        password: staff.password,
        next,
      });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/admin');
    });

    // A second app on the same database: needs a database server (the embedded one serves one session).
    itWithDatabaseServer(
      'marks the cookie Secure when the console is served over https (behind a trusted proxy)',
      async () => {
        const tls = await createTestApp({
          databaseUrl: db.url,
          env: { RATE_LIMIT_ENABLED: 'false', TRUST_PROXY: 'true' },
        });
        try {
          const agent = request.agent(tls.http);
          const form = await agent.get('/admin/login').set('X-Forwarded-Proto', 'https');
          expect(cookieNamed(form, 'bookcase_console_signin')).toMatch(/Secure/);
          const res = await agent
            .post('/admin/login')
            .set('X-Forwarded-Proto', 'https')
            .set('Cookie', `bookcase_console_signin=${csrfOf(form.text)}`)
            .type('form')
            .send({ _csrf: csrfOf(form.text), username: staff.username, password: staff.password });
          expect(res.status).toBe(303);
          expect(cookieNamed(res, 'bookcase_console')).toMatch(/; Secure/);
        } finally {
          await tls.close();
        }
      },
    );
  });

  describe('session', () => {
    it('signs out: the cookie stops working and the session is revoked', async () => {
      const { agent, csrf } = await signIn();
      const before = await scalar<number>(
        db.url,
        'SELECT count(*)::int FROM console_sessions cs JOIN refresh_sessions rs ON rs.id = cs.session_id WHERE rs.user_id = $1',
        [staff.id],
      );
      const res = await agent.post('/admin/logout').type('form').send({ _csrf: csrf });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/admin/login');
      expect((await agent.get('/admin')).status).toBe(303);
      const after = await scalar<number>(
        db.url,
        'SELECT count(*)::int FROM console_sessions cs JOIN refresh_sessions rs ON rs.id = cs.session_id WHERE rs.user_id = $1',
        [staff.id],
      );
      expect(after).toBe(before - 1);
    });

    it('ends after the idle period without requests, and lives on while used', async () => {
      const { agent } = await signIn();
      t.clock.advance(20 * 60_000);
      expect((await agent.get('/admin/photos')).status).toBe(200);
      t.clock.advance(20 * 60_000);
      expect((await agent.get('/admin/photos')).status).toBe(200);
      t.clock.advance(31 * 60_000);
      const res = await agent.get('/admin/photos');
      expect(res.status).toBe(303);
      expect(res.headers.location).toMatch(/^\/admin\/login\?next=/);
    });

    it('ends when the session is revoked through the API (sign out everywhere, password change)', async () => {
      const { agent } = await signIn();
      await withClient(db.url, (client) =>
        client.query('UPDATE refresh_sessions SET revoked_at = now() WHERE user_id = $1', [
          staff.id,
        ]),
      );
      expect((await agent.get('/admin')).status).toBe(303);
    });

    it('refuses a signed-in member whose staff rights were removed', async () => {
      const demoted = await registerUser(t.http);
      await makeStaff(db.url, demoted.id);
      const { agent } = await signIn(demoted);
      await withClient(db.url, (client) =>
        client.query('UPDATE users SET is_staff = false WHERE id = $1', [demoted.id]),
      );
      const res = await agent.get('/admin/libraries');
      expect(res.status).toBe(403);
      expect(res.text).toContain('Staff access required.');
    });
  });

  describe('forms', () => {
    let pending: { id: number; slug: string };

    beforeEach(async () => {
      pending = await insertLibrary(db.url, {
        status: 'pending',
        name: 'Corner Shelf',
        description: 'A shelf on the corner.',
      });
    });

    const status = (id: number) =>
      scalar<string>(db.url, 'SELECT status FROM libraries WHERE id = $1', [id]);

    it('refuses a form without its CSRF token (403) and changes nothing', async () => {
      const { agent } = await signIn();
      const res = await agent
        .post(`/admin/libraries/${pending.slug}/status`)
        .type('form')
        .send({ status: 'approved' });
      expect(res.status).toBe(403);
      expect(res.text).toContain(CSRF_REFUSAL);
      expect(await status(pending.id)).toBe('pending');
    });

    it('refuses a token of another session, and a cross-site post carrying the right one', async () => {
      const { agent, csrf } = await signIn();
      const other = await signIn();
      const foreign = await agent
        .post(`/admin/libraries/${pending.slug}/status`)
        .type('form')
        .send({ _csrf: other.csrf, status: 'approved' });
      expect(foreign.status).toBe(403);
      const crossSite = await agent
        .post(`/admin/libraries/${pending.slug}/status`)
        .set('Origin', 'https://evil.example')
        .type('form')
        .send({ _csrf: csrf, status: 'approved' });
      expect(crossSite.status).toBe(403);
      const fetchSite = await agent
        .post(`/admin/libraries/${pending.slug}/status`)
        .set('Sec-Fetch-Site', 'cross-site')
        .type('form')
        .send({ _csrf: csrf, status: 'approved' });
      expect(fetchSite.status).toBe(403);
      expect(await status(pending.id)).toBe('pending');
    });

    it('approves a library: redirect with a message, and the public API now shows it', async () => {
      const { agent, csrf } = await signIn();
      expect((await request(t.http).get(`/api/v1/libraries/${pending.slug}`)).status).toBe(404);
      const res = await agent
        .post(`/admin/libraries/${pending.slug}/status`)
        .type('form')
        .send({ _csrf: csrf, _return: '/admin/libraries', status: 'approved' });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(`/admin/libraries/${pending.slug}`);
      const page = await agent.get(res.headers.location);
      expect(page.text).toContain('Library approved: it is now public.');
      expect((await agent.get(res.headers.location)).text).not.toContain('Library approved');
      expect((await request(t.http).get(`/api/v1/libraries/${pending.slug}`)).status).toBe(200);
    });

    it('rejects with the reason, which the submitter sees', async () => {
      const { agent, csrf } = await signIn();
      await agent
        .post(`/admin/libraries/${pending.slug}/status`)
        .type('form')
        .send({ _csrf: csrf, status: 'rejected', rejection_reason: 'Not a bookcase.' });
      const row = await withClient(db.url, async (client) => {
        const { rows } = await client.query(
          'SELECT status, rejection_reason FROM libraries WHERE id = $1',
          [pending.id],
        );
        return rows[0] as { status: string; rejection_reason: string };
      });
      expect(row).toEqual({ status: 'rejected', rejection_reason: 'Not a bookcase.' });
    });

    it('sends an invalid form back to its page with the field errors', async () => {
      const { agent, csrf } = await signIn();
      const res = await agent
        .post(`/admin/libraries/${pending.slug}/status`)
        .type('form')
        .send({ _csrf: csrf, _return: `/admin/libraries/${pending.slug}`, status: 'bogus' });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(`/admin/libraries/${pending.slug}`);
      const page = await agent.get(res.headers.location);
      expect(page.text).toContain('Validation error.');
      expect(page.text).toMatch(/status: status must be one of/);
      expect(await status(pending.id)).toBe('pending');
    });

    it('never returns to a page outside the console after a refused form', async () => {
      const { agent, csrf } = await signIn();
      const res = await agent
        .post(`/admin/libraries/${pending.slug}/status`)
        .type('form')
        .send({ _csrf: csrf, _return: 'https://evil.example/', status: 'bogus' });
      expect(res.headers.location).toBe('/admin');
    });

    it('applies or discards a staged owner edit shown as a diff', async () => {
      const approved = await insertLibrary(db.url, {
        name: 'Old Name',
        description: 'Same text',
        pending_changes: JSON.stringify({ name: 'New <Name>', description: 'Same text' }),
      });
      const { agent, csrf } = await signIn();
      const page = await agent.get(`/admin/libraries/${approved.slug}`);
      expect(page.text).toContain('Staged changes by the owner');
      expect(page.text).toContain('<td class="old prewrap">Old Name</td>');
      expect(page.text).toContain('<td class="new prewrap">New &lt;Name&gt;</td>');
      expect(page.text).not.toContain('>description<');
      const res = await agent
        .post(`/admin/libraries/${approved.slug}/changes`)
        .type('form')
        .send({ _csrf: csrf, action: 'reject' });
      expect(res.status).toBe(303);
      expect(await scalar(db.url, 'SELECT name FROM libraries WHERE id = $1', [approved.id])).toBe(
        'Old Name',
      );
      expect(
        await scalar(db.url, 'SELECT pending_changes FROM libraries WHERE id = $1', [approved.id]),
      ).toBeNull();
    });

    it('approves a community photo and resolves a report, returning to the list', async () => {
      const library = await insertLibrary(db.url, { name: 'Photo Spot' });
      const photoId = await insertCommunityPhoto(db.url, {
        library_id: library.id,
        created_by: reader.id,
      });
      const reportId = await insertReport(db.url, { library_id: library.id, details: 'Door <b>' });
      const { agent, csrf } = await signIn();
      const photos = await agent.get('/admin/photos');
      expect(photos.text).toContain(`aria-label="Approve photo #${photoId}"`);
      const approve = await agent
        .post(`/admin/photos/${photoId}`)
        .type('form')
        .send({ _csrf: csrf, _return: '/admin/photos?status=pending', status: 'approved' });
      expect(approve.headers.location).toBe('/admin/photos?status=pending');
      expect(
        await scalar(db.url, 'SELECT status FROM library_photos WHERE id = $1', [photoId]),
      ).toBe('approved');

      const reports = await agent.get('/admin/reports');
      expect(reports.text).toContain('Door &lt;b&gt;');
      await agent
        .post(`/admin/reports/${reportId}`)
        .type('form')
        .send({ _csrf: csrf, _return: '/admin/reports', status: 'resolved' });
      expect(await scalar(db.url, 'SELECT status FROM reports WHERE id = $1', [reportId])).toBe(
        'resolved',
      );
    });
  });

  describe('pages', () => {
    it('escapes what users wrote and carries no inline script or style', async () => {
      const library = await insertLibrary(db.url, {
        status: 'pending',
        name: '<script>alert(1)</script>',
        description: '"><img src=x onerror=alert(2)>',
      });
      const { agent } = await signIn();
      for (const path of ['/admin/libraries', `/admin/libraries/${library.slug}`]) {
        const res = await agent.get(path);
        expect(res.status).toBe(200);
        expect(res.text).not.toContain('<script>alert(1)</script>');
        expect(res.text).not.toContain('<img src=x');
        expect(res.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
        expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
        expect(res.text).not.toMatch(/\sstyle=/);
      }
    });

    it('renders every section for staff, privately', async () => {
      const library = await insertLibrary(db.url, { name: 'Everywhere' });
      const { agent } = await signIn();
      for (const path of [
        '/admin',
        '/admin/libraries?status=all&country=&q=',
        `/admin/libraries/${library.slug}`,
        '/admin/photos?status=all',
        '/admin/reports?status=all&reason=all',
        '/admin/contributions?status=&eligible=',
        `/admin/contributions/${library.slug}`,
        `/admin/contributions/${library.slug}/preview?verified_name=true`,
        `/admin/contributions/${library.slug}/confirm`,
        '/admin/audit',
      ]) {
        const res = await agent.get(path);
        expect([path, res.status]).toEqual([path, 200]);
        expect(res.headers['cache-control']).toBe('private, no-store');
        expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      }
    });

    it('draws the growth chart on the dashboard as inline SVG', async () => {
      const { agent } = await signIn();
      const res = await agent.get('/admin');
      expect(res.text).toMatch(/<svg class="chart" viewBox="0 0 640 240" role="img"/);
      expect(res.text).toContain('id="pending-libraries"');
    });

    it('answers a bad filter with a 422 page naming the field, and an unknown library with 404', async () => {
      const { agent } = await signIn();
      const bad = await agent.get('/admin/libraries?country=ZZZ');
      expect(bad.status).toBe(422);
      expect(bad.text).toContain('country:');
      const missing = await agent.get('/admin/libraries/no-such-library');
      expect(missing.status).toBe(404);
      expect(missing.text).toContain('Not found.');
    });

    it('pages long queues, keeping the filters in the links', async () => {
      for (let i = 0; i < 23; i += 1) {
        await insertLibrary(db.url, { status: 'pending', name: `Queue ${i}`, country: 'FR' });
      }
      const { agent } = await signIn();
      const first = await agent.get('/admin/libraries?status=pending&country=FR&q=');
      expect(first.text).toContain('Page 1 of 2 · 23 in all');
      expect(first.text).toContain(
        'href="/admin/libraries?status=pending&amp;country=FR&amp;page=2"',
      );
      const second = await agent.get('/admin/libraries?status=pending&country=FR&page=2');
      expect(second.text).toContain('Page 2 of 2 · 23 in all');
      expect((second.text.match(/class="row"/g) ?? []).length).toBe(3);
    });
  });

  describe('map contribution', () => {
    it('shows the confirm step disabled with the reasons while writes are off', async () => {
      const library = await insertLibrary(db.url, { name: 'Gated' });
      const { agent } = await signIn();
      const res = await agent.get(`/admin/contributions/${library.slug}/confirm`);
      expect(res.text).toContain('id="write-unavailable"');
      expect(res.text).toContain('writes_disabled');
      expect(res.text).toMatch(/<button type="submit" class="button-danger" disabled/);
    });

    it('requires the explicit confirmation on the confirm form', async () => {
      const library = await insertLibrary(db.url, { name: 'Unconfirmed' });
      const { agent, csrf } = await signIn();
      const res = await agent
        .post(`/admin/contributions/${library.slug}/confirm`)
        .type('form')
        .send({ _csrf: csrf, _return: `/admin/contributions/${library.slug}/confirm` });
      expect(res.status).toBe(303);
      const page = await agent.get(res.headers.location);
      expect(page.text).toContain('Tick “I confirm this write” to send it to the map database.');
    });

    it('withdraws a permission only with its confirmation, and records it in the audit history', async () => {
      const library = await insertLibrary(db.url, {
        name: 'Opted In',
        submission_origin: 'user',
        created_by: reader.id,
        mapdb_submission_allowed: true,
      });
      const { agent, csrf } = await signIn();
      const unconfirmed = await agent
        .post(`/admin/contributions/${library.slug}/withdraw`)
        .type('form')
        .send({ _csrf: csrf });
      expect(unconfirmed.status).toBe(303);
      expect(
        await scalar(db.url, 'SELECT mapdb_submission_allowed FROM libraries WHERE id = $1', [
          library.id,
        ]),
      ).toBe(true);
      const res = await agent
        .post(`/admin/contributions/${library.slug}/withdraw`)
        .type('form')
        .send({ _csrf: csrf, confirm_withdraw: 'yes' });
      expect(res.headers.location).toBe(`/admin/contributions/${library.slug}`);
      const page = await agent.get(res.headers.location);
      expect(page.text).toContain('Permission withdrawn');
      expect(page.text).toContain('<dd id="permission">not given</dd>');
      const audit = await agent.get('/admin/audit');
      expect(audit.text).toContain('permission withdrawal');
      expect(audit.text).toContain(staff.username);
    });
  });
});

describe('staff console sign-in rate limit', () => {
  let staff: RegisteredUser;

  const { db, t } = useTestSuite({ env: { RATE_LIMIT_LOGIN: '2' } });

  beforeAll(async () => {
    staff = await registerUser(t.http);
    await makeStaff(db.url, staff.id);
  });

  it('shares the API login counter: over the limit the form answers 429 and signs nobody in', async () => {
    for (let i = 0; i < 2; i += 1) {
      await request(t.http)
        .post('/api/v1/auth/login')
        .send({ username: staff.username, password: 'wrong' });
    }
    const { res } = await postSignInForm(t.http, {
      username: staff.username,
      password: staff.password,
    });
    expect(res.status).toBe(429);
    expect(res.text).toContain('Too many login attempts. Please try again later.');
    expect(cookieNamed(res, 'bookcase_console')).toBeUndefined();
  });
});
