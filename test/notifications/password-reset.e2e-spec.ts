/**
 * Password reset and account notices by email, end to end: the real app sends real messages to a loopback SMTP
 * server (smtp-server). The notification worker's polling is off; the tests run it with runOnce() and move time
 * with the fake clock.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import request from 'supertest';
import { NotificationsWorker } from '../../src/notifications/notifications.worker.js';
import { bearer, loginUser, registerUser, sendResetMail, TEST_PASSWORD } from '../support/auth.js';
import { queryRows } from '../support/database.js';
import { startFakeSmtp, resetTokenOf } from '../support/fake-smtp.js';
import { useTestSuite } from '../support/suite.js';

const REQUESTED = {
  message: 'If an account uses that email, a reset link has been sent.',
  details: null,
};
const DONE = {
  message: 'Your password has been reset. You can now sign in with it.',
  details: null,
};
const INVALID_LINK = {
  message: 'This password reset link is invalid, expired or already used. Ask for a new one.',
  details: null,
};
const NEW_PASSWORD = 'Amber-Harbour-4821';
const MINUTE = 60_000;

describe('password reset and account notices by email', () => {
  const {
    db,
    t,
    fakes: { smtp },
  } = useTestSuite({
    fakes: async () => ({ smtp: await startFakeSmtp() }),
    env: ({ smtp }) => ({
      RATE_LIMIT_ENABLED: 'false',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Bookcase Directory <no-reply@bookcase.test>',
      PUBLIC_BASE_URL: 'https://bookcase.test',
    }),
  });
  let worker: NotificationsWorker;
  const api = (path: string) => `/api/v1/auth/${path}`;
  const query = <T = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    queryRows<T>(db.url, sql, params);

  const askReset = (email: string) => request(t.http).post(api('password/reset')).send({ email });

  /** Asks for a reset, sends the queued mail, answers the mail's token. */
  async function resetToken(email: string): Promise<string> {
    await sendResetMail(t, email);
    const mails = resetMails(email);
    return resetTokenOf(mails[mails.length - 1]);
  }

  const confirm = (token: string, password = NEW_PASSWORD, again = password) =>
    request(t.http)
      .post(api('password/reset/confirm'))
      .send({ token, new_password: password, new_password_confirm: again });

  beforeAll(() => {
    worker = t.app.get(NotificationsWorker);
  });

  // Each test starts with nothing due: what an earlier test left queued (its notices) is sent first.
  beforeEach(async () => {
    await worker.runOnce();
    smtp.clear();
  });

  const resetMails = (email: string) =>
    smtp.to(email).filter((mail) => mail.subject.startsWith('Reset your password'));

  it('mails a single-use link; the new password works, every old session is signed out, a notice follows', async () => {
    const user = await registerUser(t.http);
    const second = await loginUser(t.http, user.username, user.password);
    const res = await askReset(user.email.toUpperCase()).expect(200);
    expect(res.body).toEqual(REQUESTED);
    expect(smtp.received).toHaveLength(0); // queued, not sent inside the request
    expect(await worker.runOnce()).toBe(1);

    const [mail] = smtp.to(user.email);
    expect(smtp.received).toHaveLength(1);
    expect(mail.from).toBe('no-reply@bookcase.test');
    expect(mail.subject).toBe('Reset your password · Bookcase Directory');
    const token = resetTokenOf(mail);
    const link = `https://bookcase.test/reset-password?token=${token}`;
    expect(mail.text).toContain(link);
    expect(mail.text).toContain(user.username);
    expect(mail.html).toContain(`href="${link}"`);
    expect(mail.messageId).toMatch(/^<[0-9a-f-]{36}@bookcase\.test>$/);
    // Only the hash is stored.
    const rows = await query<{ token_hash: Buffer; expires_at: Date; created_at: Date }>(
      'SELECT token_hash, expires_at, created_at FROM password_reset_tokens WHERE user_id = $1',
      [user.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash.equals(createHash('sha256').update(token).digest())).toBe(true);
    expect(rows[0].expires_at.getTime() - rows[0].created_at.getTime()).toBe(60 * MINUTE);

    // The link's page offers the form.
    const page = await request(t.http).get(`/reset-password?token=${token}`).expect(200);
    expect(page.text).toContain('name="new_password"');

    expect((await confirm(token).expect(200)).body).toEqual(DONE);
    for (const session of [user, second]) {
      await request(t.http).post(api('refresh')).send({ refresh: session.refresh }).expect(401);
      await request(t.http).get(api('me')).set('Authorization', bearer(session.access)).expect(401);
    }
    await request(t.http)
      .post(api('login'))
      .send({ username: user.username, password: user.password })
      .expect(401);
    await loginUser(t.http, user.username, NEW_PASSWORD);

    await worker.runOnce();
    const notice = smtp.to(user.email)[1];
    expect(notice.subject).toBe('Your password was reset · Bookcase Directory');
    expect(notice.text).toContain('reset with a link sent to this address');
  });

  it('a link works once; a newer link is used up with it', async () => {
    const user = await registerUser(t.http);
    const first = await resetToken(user.email);
    const second = await resetToken(user.email);
    expect(first).not.toBe(second);
    await confirm(second).expect(200);
    expect((await confirm(second, 'Velvet-Canyon-5512').expect(400)).body).toEqual(INVALID_LINK);
    expect((await confirm(first, 'Velvet-Canyon-5512').expect(400)).body).toEqual(INVALID_LINK);
    await request(t.http).get(`/reset-password?token=${second}`).expect(400);
    await loginUser(t.http, user.username, NEW_PASSWORD);
  });

  it('a link expires after one hour', async () => {
    const user = await registerUser(t.http);
    const token = await resetToken(user.email);
    t.clock.advance(59 * MINUTE);
    await request(t.http).get(`/reset-password?token=${token}`).expect(200);
    t.clock.advance(MINUTE);
    expect((await confirm(token).expect(400)).body).toEqual(INVALID_LINK);
    await loginUser(t.http, user.username, TEST_PASSWORD);
  });

  it('answers the same for an address no account uses, and mails nothing', async () => {
    const user = await registerUser(t.http);
    const known = await askReset(user.email).expect(200);
    const unknown = await askReset('nobody-at-all@example.org').expect(200);
    expect(unknown.body).toEqual(known.body);
    const headers = (res: request.Response) =>
      Object.keys(res.headers)
        .filter((name) => !['date', 'x-request-id'].includes(name))
        .sort()
        .map((name) => `${name}: ${name === 'content-length' ? '' : res.headers[name]}`);
    expect(headers(unknown)).toEqual(headers(known));
    expect(await worker.runOnce()).toBe(2);
    expect(smtp.received.map((mail) => mail.to)).toEqual([[user.email]]);
    const jobs = await query<{ status: string; last_error: string }>(
      `SELECT status, last_error FROM notification_jobs WHERE recipient = 'nobody-at-all@example.org'`,
    );
    expect(jobs).toEqual([{ status: 'skipped', last_error: 'no account uses this address' }]);
  });

  it('refuses a malformed address, a weak or mismatched password and a malformed token', async () => {
    expect((await askReset('not-an-email').expect(400)).body).toEqual({
      message: 'Provide a valid email address.',
      details: null,
    });
    const missing = await request(t.http).post(api('password/reset')).send({}).expect(422);
    expect(missing.body.details.errors[0].loc).toEqual(['body', 'email']);
    const user = await registerUser(t.http);
    const token = await resetToken(user.email);
    expect((await confirm(token, 'short').expect(400)).body).toEqual({
      message: 'This password is too short. It must contain at least 8 characters.',
      details: null,
    });
    expect((await confirm(token, 'password123').expect(400)).body.message).toBe(
      'This password is too common.',
    );
    expect((await confirm(token, NEW_PASSWORD, `${NEW_PASSWORD}x`).expect(400)).body).toEqual({
      message: 'New passwords do not match.',
      details: null,
    });
    expect((await confirm('x'.repeat(10)).expect(400)).body).toEqual(INVALID_LINK);
    const incomplete = await request(t.http)
      .post(api('password/reset/confirm'))
      .send({ token })
      .expect(422);
    expect(incomplete.body.details.errors.map((e: { loc: string[] }) => e.loc[1]).sort()).toEqual([
      'new_password',
      'new_password_confirm',
    ]);
    // The link still works after the refusals.
    await confirm(token).expect(200);
  });

  it('lets a social-only account set its first password', async () => {
    const [{ id }] = await query<{ id: number }>(
      `INSERT INTO users (username, email, password_hash) VALUES ('apple_only', 'apple.only@example.org', NULL)
       RETURNING id`,
    );
    const token = await resetToken('apple.only@example.org');
    await confirm(token).expect(200);
    const tokens = await loginUser(t.http, 'apple.only@example.org', NEW_PASSWORD);
    const me = await request(t.http).get(api('me')).set('Authorization', bearer(tokens.access));
    expect(me.body).toMatchObject({ id, is_social_only: false });
  });

  it('sends a notice to the old address on an email change, and to the address on a password change', async () => {
    const user = await registerUser(t.http);
    await request(t.http)
      .patch(api('me/email'))
      .set('Authorization', bearer(user.access))
      .send({ email: `renamed.${user.id}@example.org` })
      .expect(200);
    await request(t.http)
      .put(api('me/password'))
      .set('Authorization', bearer(user.access))
      .send({
        current_password: user.password,
        new_password: NEW_PASSWORD,
        new_password_confirm: NEW_PASSWORD,
      })
      .expect(200);
    expect(await worker.runOnce()).toBe(2);
    const [changed] = smtp.to(user.email);
    expect(changed.subject).toBe('Your email address was changed · Bookcase Directory');
    expect(changed.text).toContain('r•••@example.org');
    expect(changed.text).not.toContain(`renamed.${user.id}`);
    const [password] = smtp.to(`renamed.${user.id}@example.org`);
    expect(password.subject).toBe('Your password was changed · Bookcase Directory');
    expect(password.html).toContain('https://bookcase.test/reset-password');
    expect(smtp.received).toHaveLength(2);
  });

  it('tries a mail again with backoff when the server answers 4xx, and gives up on 5xx', async () => {
    const user = await registerUser(t.http);
    smtp.failNext(451);
    await askReset(user.email).expect(200);
    expect(await worker.runOnce()).toBe(1);
    expect(smtp.to(user.email)).toHaveLength(0);
    const [job] = await query<{ id: string; status: string; attempts: number; run_after: Date }>(
      `SELECT id, status, attempts, run_after FROM notification_jobs
        WHERE recipient = $1 AND kind = 'password_reset'`,
      [user.email],
    );
    expect(job).toMatchObject({ status: 'queued', attempts: 1 });
    expect(job.run_after.getTime()).toBe(t.clock.now() + 30_000);
    expect(await worker.runOnce()).toBe(0);
    t.clock.advance(30_000);
    expect(await worker.runOnce()).toBe(1);
    expect(smtp.to(user.email)).toHaveLength(1);
    // The failed try's token was never delivered and is gone; the delivered one works.
    expect(
      await query('SELECT 1 FROM password_reset_tokens WHERE user_id = $1', [user.id]),
    ).toHaveLength(1);
    await confirm(resetTokenOf(smtp.to(user.email)[0])).expect(200);
    await worker.runOnce(); // the notice of the reset

    smtp.failNext(550);
    await askReset(user.email).expect(200);
    await worker.runOnce();
    t.clock.advance(60 * MINUTE);
    await worker.runOnce();
    expect(resetMails(user.email)).toHaveLength(1);
    const failed = await query<{ status: string; last_error: string }>(
      `SELECT status, last_error FROM notification_jobs WHERE recipient = $1 AND kind = 'password_reset'
        ORDER BY id DESC LIMIT 1`,
      [user.email],
    );
    expect(failed).toEqual([{ status: 'failed', last_error: 'smtp 550' }]);
  });

  describe('the reset page', () => {
    it('is the console’s kind of page: strict CSP, no framing, no referrer elsewhere, no caching', async () => {
      const user = await registerUser(t.http);
      const token = await resetToken(user.email);
      const page = await request(t.http).get(`/reset-password?token=${token}`).expect(200);
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
      expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.headers['referrer-policy']).toBe('same-origin');
      expect(page.headers['cache-control']).toBe('private, no-store');
      expect(page.text).toContain('/admin/assets/console.css');
      expect(page.headers['set-cookie']?.[0]).toMatch(
        /^bookcase_reset_csrf=[^;]+; Max-Age=3600; Path=\/reset-password; HttpOnly; SameSite=Strict$/,
      );
    });

    it('refuses a post without the form’s CSRF token, or from another origin', async () => {
      const user = await registerUser(t.http);
      const token = await resetToken(user.email);
      const agent = request.agent(t.http);
      const page = await agent.get(`/reset-password?token=${token}`).expect(200);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
      const form = { token, new_password: NEW_PASSWORD, new_password_confirm: NEW_PASSWORD };
      const forged = await agent.post('/reset-password').type('form').send(form).expect(403);
      expect(forged.headers['content-type']).toMatch(/^text\/html/);
      await agent
        .post('/reset-password')
        .set('Origin', 'https://evil.example')
        .type('form')
        .send({ ...form, _csrf: csrf })
        .expect(403);
      const done = await agent
        .post('/reset-password')
        .type('form')
        .send({ ...form, _csrf: csrf })
        .expect(200);
      expect(done.text).toContain(DONE.message);
      await loginUser(t.http, user.username, NEW_PASSWORD);
    });

    it('says why a link cannot be used', async () => {
      const page = await request(t.http).get('/reset-password?token=nope').expect(400);
      expect(page.text).toContain(INVALID_LINK.message);
      await request(t.http).get('/reset-password').expect(400);
    });
  });
});

describe('password reset limits', () => {
  const { db, t } = useTestSuite({
    env: { TRUST_PROXY: 'true', RATE_LIMIT_REGISTER: '100' },
  });

  const ask = (email: string, ip: string) =>
    request(t.http).post('/api/v1/auth/password/reset').set('X-Forwarded-For', ip).send({ email });

  it('allows 5 requests per window per client IP', async () => {
    for (let i = 0; i < 5; i += 1) await ask(`someone.${i}@example.org`, '203.0.113.7').expect(200);
    const refused = await ask('someone.5@example.org', '203.0.113.7').expect(429);
    expect(refused.body).toEqual({
      message: 'Too many password reset attempts. Please try again later.',
      details: { retry_after: 300 },
    });
    await ask('someone.5@example.org', '203.0.113.8').expect(200);
    t.clock.advance(300_000);
    await ask('someone.6@example.org', '203.0.113.7').expect(200);
  });

  it('allows 5 requests per window per address, whatever the IP, known or not', async () => {
    const user = await registerUser(t.http);
    for (const email of [user.email, 'no-such-account@example.org']) {
      for (let i = 0; i < 5; i += 1) await ask(email, `198.51.100.${i + 1}`).expect(200);
      const refused = await ask(email.toUpperCase(), '198.51.100.99').expect(429);
      expect(refused.body.message).toBe(
        'Too many password reset attempts. Please try again later.',
      );
    }
    const jobs = await queryRows<{ n: number }>(
      db.url,
      `SELECT recipient, count(*)::int AS n FROM notification_jobs GROUP BY recipient
       HAVING recipient IN ($1, 'no-such-account@example.org') ORDER BY recipient`,
      [user.email],
    );
    expect(jobs.map((row) => row.n)).toEqual([5, 5]);
  });
});

describe('mail without SMTP', () => {
  const { t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });

  it('writes each message as an .eml file under DATA_DIR/mail/', async () => {
    const user = await registerUser(t.http);
    await sendResetMail(t, user.email);
    const dir = join(t.config.dataDir, 'mail');
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/\.eml$/);
    const mail = await simpleParser(readFileSync(join(dir, files[0])));
    expect(mail.to).toMatchObject({ text: user.email });
    expect(mail.subject).toBe('Reset your password · Bookcase Directory');
    expect(mail.text).toMatch(
      /^http:\/\/localhost:3000\/reset-password\?token=[A-Za-z0-9_-]{43}$/m,
    );
    expect(mail.html).toContain('Set a new password');
  });
});
