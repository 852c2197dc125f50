/**
 * Push notifications through the APNs provider API, against a loopback HTTP/2 TLS double (test/support/fake-apns.ts)
 * that checks the provider token (ES256, kid, iss), the topic, the headers and the payload. The notification worker's
 * polling is off: tests run it with runOnce(); time moves with the fake clock (backoff, collapsing, leases).
 */
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { NotificationJobsRepository } from '../../src/notifications/notification-jobs.repository.js';
import { NotificationsWorker } from '../../src/notifications/notifications.worker.js';
import {
  bearer,
  loginUser,
  makeStaff,
  registerUser,
  type RegisteredUser,
} from '../support/auth.js';
import { FakeClock } from '../support/clock.js';
import { postPhoto } from '../support/community.js';
import { queryRows } from '../support/database.js';
import { FakeApnsServer, type ApnsRequest } from '../support/fake-apns.js';
import { createLibrary, multipart } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const MINUTE = 60_000;

const waiting = (n: number) =>
  n === 1 ? '1 item is waiting for moderation.' : `${n} items are waiting for moderation.`;
const deviceToken = () => randomBytes(32).toString('hex');

describe('push notifications (APNs provider API)', () => {
  const clock = new FakeClock();
  const {
    db,
    t,
    staff,
    fakes: { apns },
    startApp,
  } = useTestSuite({
    fakes: async () => {
      const apns = new FakeApnsServer();
      apns.now = () => clock.now();
      await apns.start();
      return { apns };
    },
    clock,
    // Access tokens outlive the clock's jumps (collapse windows, backoff, leases).
    env: ({ apns }) => ({ RATE_LIMIT_ENABLED: 'false', JWT_ACCESS_TTL: '30d', ...apns.env() }),
    users: { staff: 'staff' },
  });
  let worker: NotificationsWorker;
  let staffDevice: string;

  const query = <T = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    queryRows<T>(db.url, sql, params);

  async function registerDevice(
    user: RegisteredUser,
    environment: 'sandbox' | 'production',
  ): Promise<string> {
    const token = deviceToken();
    await request(t.http)
      .post('/api/v1/auth/devices')
      .set('Authorization', bearer(user.access))
      .send({ token, environment })
      .expect(201);
    return token;
  }

  const decide = (slug: string, body: Record<string, unknown>) =>
    request(t.http)
      .patch(`/api/v1/libraries/moderation/${slug}`)
      .set('Authorization', bearer(staff.access))
      .send(body)
      .expect(200);

  /** A submitter with a sandbox device and a pending library of theirs. */
  async function submitter(name = 'Corner Bookcase') {
    const user = await registerUser(t.http);
    const device = await registerDevice(user, 'sandbox');
    const library = await createLibrary(t.http, user.access, { name });
    return { user, device, library };
  }

  const pushesTo = (token: string) => apns.to(token);
  const alert = (push: ApnsRequest) =>
    (push.payload.aps as { alert: { title: string; body: string } }).alert;

  beforeAll(async () => {
    worker = t.app.get(NotificationsWorker);
    staffDevice = await registerDevice(staff, 'production');
  });

  // Each test starts with nothing due (staff pushes of earlier tests' submissions are sent, then forgotten).
  beforeEach(async () => {
    clock.advance(20 * MINUTE);
    await worker.runOnce();
    apns.clear();
  });

  it('tells the submitter that their library was approved, to the device’s environment, signed as APNs requires', async () => {
    const { user, device, library } = await submitter('Linden Street Bookcase');
    await decide(library.slug, { status: 'approved' });
    await worker.runOnce();
    const [push] = pushesTo(device);
    expect(pushesTo(device)).toHaveLength(1);
    expect(push.problems).toEqual([]);
    expect(push.authority).toBe(`localhost:${apns.port}`); // sandbox device → sandbox host
    expect(push.headers).toMatchObject({
      'apns-topic': 'org.example.bookcase',
      'apns-push-type': 'alert',
      'apns-priority': '10',
    });
    expect(push.payload).toEqual({
      aps: {
        alert: {
          title: 'Bookcase published',
          body: '"Linden Street Bookcase" is now on the map. Thank you!',
        },
        sound: 'default',
        'thread-id': 'submissions',
      },
      kind: 'library_approved',
      library_slug: library.slug,
    });
    const text = JSON.stringify(push);
    expect(text).not.toContain(user.email);
    expect(text).not.toContain(user.username);
    // Sent once: nothing more on the next run, nor on a second approval of an approved library.
    await decide(library.slug, { status: 'approved' });
    await worker.runOnce();
    expect(pushesTo(device)).toHaveLength(1);
  });

  it('tells the submitter that their library was rejected, with the reason', async () => {
    const { device, library } = await submitter('Old Phone Box');
    await decide(library.slug, {
      status: 'rejected',
      rejection_reason: 'Duplicate of an existing entry.',
    });
    await worker.runOnce();
    const [push] = pushesTo(device);
    expect(push.problems).toEqual([]);
    expect(push.payload.kind).toBe('library_rejected');
    expect(alert(push)).toEqual({
      title: 'Bookcase not published',
      body: '"Old Phone Box" was not published: Duplicate of an existing entry.',
    });
  });

  it('tells the author of a community photo about the decision', async () => {
    const owner = await registerUser(t.http);
    const library = await createLibrary(t.http, owner.access, { name: 'Harbour Shelf' });
    await decide(library.slug, { status: 'approved' });
    const photographer = await registerUser(t.http);
    const device = await registerDevice(photographer, 'production');
    const posted = await postPhoto(t.http, photographer.access, library.slug);
    expect(posted.status).toBe(201);
    await request(t.http)
      .patch(`/api/v1/libraries/moderation/photos/${posted.body.id}`)
      .set('Authorization', bearer(staff.access))
      .send({ status: 'approved' })
      .expect(200);
    await worker.runOnce();
    const [push] = pushesTo(device);
    expect(push.authority).toBe(`127.0.0.1:${apns.port}`); // production device → production host
    expect(push.payload).toMatchObject({ kind: 'photo_approved', photo_id: posted.body.id });
    expect(alert(push).body).toBe('Your photo of "Harbour Shelf" is now shown.');
  });

  it('tells staff that work is waiting at most once per 15 minutes, with the count at send time', async () => {
    const first = await submitter();
    expect(pushesTo(staffDevice)).toHaveLength(0);
    await worker.runOnce();
    const pending = await query<{ n: number }>(
      "SELECT count(*)::int AS n FROM libraries WHERE status = 'pending'",
    );
    expect(pushesTo(staffDevice)).toHaveLength(1);
    const [push] = pushesTo(staffDevice);
    expect(push.problems).toEqual([]);
    expect(push.payload).toMatchObject({ kind: 'moderation_work' });
    expect(alert(push).body).toBe(waiting(pending[0].n));
    expect(push.headers['apns-collapse-id']).toBe('moderation_work');

    // Three more pieces of work within the window: one queued push, no more.
    await createLibrary(t.http, first.user.access);
    clock.advance(5 * MINUTE);
    await createLibrary(t.http, first.user.access);
    await worker.runOnce();
    clock.advance(9 * MINUTE);
    await createLibrary(t.http, first.user.access);
    await worker.runOnce();
    expect(pushesTo(staffDevice)).toHaveLength(1);
    expect(
      await query(
        "SELECT 1 FROM notification_jobs WHERE kind = 'moderation_work' AND status = 'queued'",
      ),
    ).toHaveLength(1);
    clock.advance(MINUTE);
    await worker.runOnce();
    expect(pushesTo(staffDevice)).toHaveLength(2);
    expect(alert(pushesTo(staffDevice)[1]).body).toBe(waiting(pending[0].n + 3));
    // Staff do not get pushes about their own work.
    const other = await registerUser(t.http);
    await makeStaff(db.url, other.id);
    const otherDevice = await registerDevice(other, 'sandbox');
    clock.advance(20 * MINUTE);
    await createLibrary(t.http, other.access);
    await worker.runOnce();
    expect(pushesTo(otherDevice)).toHaveLength(0);
    expect(pushesTo(staffDevice)).toHaveLength(3);
  });

  it('counts reports, staged owner edits and community photos as moderation work too', async () => {
    const owner = await registerUser(t.http);
    const library = await createLibrary(t.http, owner.access, { name: 'Station Shelf' });
    await decide(library.slug, { status: 'approved' });
    clock.advance(20 * MINUTE);
    await worker.runOnce();
    apns.clear();
    const reporter = await registerUser(t.http);
    const work = [
      () =>
        multipart(
          request(t.http).post(`/api/v1/libraries/${library.slug}/report`),
          { reason: 'damaged', details: 'The door is off.' },
          null,
          reporter.access,
        ).expect(201),
      () =>
        multipart(
          request(t.http).patch(`/api/v1/libraries/${library.slug}`),
          { description: 'Now with a bench.' },
          null,
          owner.access,
        ).expect(200),
      () =>
        postPhoto(t.http, reporter.access, library.slug).then((res) =>
          expect(res.status).toBe(201),
        ),
    ];
    for (const [index, act] of work.entries()) {
      await act();
      const queued = await query(
        "SELECT 1 FROM notification_jobs WHERE kind = 'moderation_work' AND status = 'queued' AND user_id = $1",
        [staff.id],
      );
      expect([index, queued.length]).toEqual([index, 1]);
      clock.advance(20 * MINUTE);
      await worker.runOnce();
      expect(pushesTo(staffDevice)).toHaveLength(index + 1);
    }
  });

  it('forgets finished jobs after 30 days', async () => {
    const { library } = await submitter();
    await decide(library.slug, { status: 'approved' });
    await worker.runOnce();
    const finished = () =>
      query('SELECT 1 FROM notification_jobs WHERE finished_at IS NOT NULL AND finished_at <= $1', [
        clock.date(),
      ]);
    expect((await finished()).length).toBeGreaterThan(0);
    clock.advance(29 * 24 * 60 * MINUTE);
    await worker.runOnce();
    expect((await finished()).length).toBeGreaterThan(0);
    clock.advance(2 * 24 * 60 * MINUTE);
    await worker.runOnce();
    expect(
      await query('SELECT 1 FROM notification_jobs WHERE finished_at < $1', [
        new Date(clock.now() - 30 * 24 * 60 * MINUTE),
      ]),
    ).toEqual([]);
    // A month later: the staff member signs in again for the tests that follow.
    Object.assign(staff, await loginUser(t.http, staff.username, staff.password));
  });

  it('deactivates a token APNs answers 410 Unregistered or 400 BadDeviceToken for, and pushes to it no more', async () => {
    const gone = await submitter();
    const bad = await submitter();
    apns.script(gone.device, { status: 410, reason: 'Unregistered' });
    apns.script(bad.device, { status: 400, reason: 'BadDeviceToken' });
    await decide(gone.library.slug, { status: 'approved' });
    await decide(bad.library.slug, { status: 'approved' });
    await worker.runOnce();
    const devices = await query<{ token: string; is_active: boolean }>(
      'SELECT token, is_active FROM device_tokens WHERE token = ANY($1) ORDER BY token',
      [[gone.device, bad.device]],
    );
    expect(devices.map((d) => d.is_active)).toEqual([false, false]);
    const jobs = await query<{ status: string; last_error: string }>(
      `SELECT j.status, j.last_error FROM notification_jobs j JOIN device_tokens d ON d.id = j.device_token_id
        WHERE d.token = ANY($1) ORDER BY j.last_error`,
      [[gone.device, bad.device]],
    );
    expect(jobs).toEqual([
      { status: 'skipped', last_error: '400 BadDeviceToken' },
      { status: 'skipped', last_error: '410 Unregistered' },
    ]);
    await createLibrary(t.http, gone.user.access, { name: 'Second try' }).then((library) =>
      decide(library.slug, { status: 'rejected', rejection_reason: 'Too far from a road.' }),
    );
    await worker.runOnce();
    expect(pushesTo(gone.device)).toHaveLength(1);
  });

  it('tries again with backoff after 429 and 5xx, and sends once', async () => {
    const { device, library } = await submitter();
    apns.script(
      device,
      { status: 429, reason: 'TooManyRequests' },
      { status: 503, reason: 'ServiceUnavailable' },
    );
    await decide(library.slug, { status: 'approved' });
    await worker.runOnce();
    expect(pushesTo(device)).toHaveLength(1);
    const [job] = await query<{
      status: string;
      attempts: number;
      run_after: Date;
      last_error: string;
    }>(
      `SELECT j.status, j.attempts, j.run_after, j.last_error FROM notification_jobs j
         JOIN device_tokens d ON d.id = j.device_token_id WHERE d.token = $1`,
      [device],
    );
    expect(job).toMatchObject({ status: 'queued', attempts: 1, last_error: '429 TooManyRequests' });
    expect(job.run_after.getTime()).toBe(clock.now() + 30_000);
    await worker.runOnce();
    expect(pushesTo(device)).toHaveLength(1);
    clock.advance(30_000);
    await worker.runOnce();
    expect(pushesTo(device)).toHaveLength(2);
    clock.advance(2 * MINUTE);
    await worker.runOnce();
    expect(pushesTo(device)).toHaveLength(3);
    const ids = new Set(pushesTo(device).map((push) => push.headers['apns-id']));
    expect(ids.size).toBe(1); // one message, tried three times
    const [sent] = await query<{ status: string; attempts: number }>(
      `SELECT j.status, j.attempts FROM notification_jobs j
         JOIN device_tokens d ON d.id = j.device_token_id WHERE d.token = $1`,
      [device],
    );
    expect(sent).toEqual({ status: 'sent', attempts: 3 });
    clock.advance(60 * MINUTE);
    await worker.runOnce();
    expect(pushesTo(device)).toHaveLength(3);
  });

  it('respects the opt-out: PATCH /auth/me/notifications, shown on GET /auth/me', async () => {
    const { user, device, library } = await submitter();
    const me = () =>
      request(t.http).get('/api/v1/auth/me').set('Authorization', bearer(user.access)).expect(200);
    expect((await me()).body.notifications).toEqual({ email: true, push: true });
    const patch = (body: unknown) =>
      request(t.http)
        .patch('/api/v1/auth/me/notifications')
        .set('Authorization', bearer(user.access))
        .send(body as object);
    const off = await patch({ push: false }).expect(200);
    expect(off.body).toMatchObject({ id: user.id, notifications: { email: true, push: false } });
    expect((await me()).body.notifications).toEqual({ email: true, push: false });
    await decide(library.slug, { status: 'approved' });
    await worker.runOnce();
    expect(pushesTo(device)).toHaveLength(0);
    const emails = await query<{ channel: string }>(
      'SELECT channel FROM notification_jobs WHERE user_id = $1',
      [user.id],
    );
    expect(emails).toEqual([{ channel: 'email' }]);

    // Bad input is a 422 at the field; an empty body says what to send.
    const wrong = await patch({ push: 'no' }).expect(422);
    expect(wrong.body.details.errors[0].loc).toEqual(['body', 'push']);
    const empty = await patch({}).expect(422);
    expect(empty.body.details.errors[0]).toEqual({
      loc: ['body'],
      msg: 'Provide email, push or both.',
      type: 'missing',
    });
    await request(t.http).patch('/api/v1/auth/me/notifications').send({ push: true }).expect(401);
    // A push queued before the opt-out is not sent either.
    await patch({ push: true }).expect(200);
    const next = await createLibrary(t.http, user.access);
    await decide(next.slug, { status: 'approved' });
    await patch({ email: false, push: false }).expect(200);
    await worker.runOnce();
    expect(pushesTo(device)).toHaveLength(0);
    expect((await me()).body.notifications).toEqual({ email: false, push: false });
  });

  describe('restarts', () => {
    it('a worker that dies between claim and send loses nothing: another instance sends once, after the lease', async () => {
      const { device, library } = await submitter();
      await decide(library.slug, { status: 'approved' });
      // Instance A claims every due job (the push and the email of the decision) and dies before sending: its
      // process ends, its leases stay in the table.
      const a = await startApp();
      const claims = a.app.get(NotificationJobsRepository);
      const claimed = [];
      for (;;) {
        const job = await claims.claimNext(clock.date(), new Date(clock.now() + 2 * MINUTE));
        if (!job) break;
        claimed.push(job);
      }
      expect(claimed.map((job) => `${job.channel} ${job.kind}`).sort()).toEqual([
        'email library_approved',
        'push library_approved',
      ]);
      await a.close();
      // Instance B: the job is held by A's lease until it expires.
      const b = await startApp();
      try {
        const workerB = b.app.get(NotificationsWorker);
        await workerB.runOnce();
        expect(pushesTo(device)).toHaveLength(0);
        clock.advance(2 * MINUTE);
        await workerB.runOnce();
        await worker.runOnce();
        expect(pushesTo(device)).toHaveLength(1);
        expect(pushesTo(device)[0].problems).toEqual([]);
        clock.advance(60 * MINUTE);
        await workerB.runOnce();
        await worker.runOnce();
        expect(pushesTo(device)).toHaveLength(1);
      } finally {
        await b.close();
      }
    });

    it('a shutdown finishes the send in flight and claims nothing more; the next instance sends the rest, once each', async () => {
      const first = await submitter();
      const second = await submitter();
      await decide(first.library.slug, { status: 'approved' });
      await decide(second.library.slug, { status: 'approved' });
      const a = await startApp();
      apns.hold();
      const running = a.app.get(NotificationsWorker).runOnce();
      await apns.arrived(1);
      const closing = a.close();
      apns.release();
      await Promise.all([running, closing]);
      expect(apns.requests).toHaveLength(1);

      const b = await startApp();
      try {
        await b.app.get(NotificationsWorker).runOnce();
        await worker.runOnce();
      } finally {
        await b.close();
      }
      expect(pushesTo(first.device)).toHaveLength(1);
      expect(pushesTo(second.device)).toHaveLength(1);
      const statuses = await query<{ status: string }>(
        `SELECT j.status FROM notification_jobs j JOIN device_tokens d ON d.id = j.device_token_id
          WHERE d.token = ANY($1)`,
        [[first.device, second.device]],
      );
      expect(statuses).toEqual([{ status: 'sent' }, { status: 'sent' }]);
    });

    it('two instances working the queue at once send each push once', async () => {
      const users = await Promise.all([submitter(), submitter(), submitter(), submitter()]);
      for (const { library } of users) await decide(library.slug, { status: 'approved' });
      const b = await startApp();
      try {
        await Promise.all([worker.runOnce(), b.app.get(NotificationsWorker).runOnce()]);
      } finally {
        await b.close();
      }
      for (const { device } of users) expect(pushesTo(device)).toHaveLength(1);
    });
  });
});
