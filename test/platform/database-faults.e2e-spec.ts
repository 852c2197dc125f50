/**
 * Issue 14, items 2–3, on this file's own database (the shared server is never touched): the app's connections are
 * terminated (pg_terminate_backend) in the middle of submissions, also right after a COMMIT (a trigger NOTIFYs at
 * commit and the test kills every app connection the moment it hears it), and a held lock trips
 * statement_timeout and the bounded pool wait. Afterwards every row's photo files exist, no file is left
 * unreferenced once the sweep has run, and every failure was the 503 envelope with Retry-After.
 */
import { existsSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { SWEEP_LOCK_KEY } from '../../src/common/media/media-references.repository.js';
import { OrphanMediaSweep } from '../../src/common/media/orphan-media-sweep.js';
import { MediaStorage } from '../../src/common/media/media-storage.js';
import { registerUser, type RegisteredUser } from '../support/auth.js';
import { describeWithDatabaseServer } from '../support/app.js';
import { withClient } from '../support/database.js';
import { referencedMediaKeys } from '../support/media-consistency.js';
import {
  defaultPhoto,
  insertLibrary,
  mediaFiles,
  submissionFields,
  submitLibrary,
} from '../support/libraries.js';
import { postPhoto } from '../support/community.js';
import { useTestSuite } from '../support/suite.js';

const UNAVAILABLE = {
  message: 'Service temporarily unavailable.',
  details: { retry_after: 5 },
};

/** Ends every session of the app on this database (not ours, nor `spare`). Answers how many it ended. */
async function terminateAppConnections(admin: pg.Client, spare: number[] = []): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (
       SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> ALL($1::int[])
         AND backend_type = 'client backend'
     ) ended`,
    [spare],
  );
  return rows[0].n;
}

/**
 * Runs `work` while `rounds` terminations of the app's connections happen `intervalMs` apart; `running()` turns
 * false after the last one.
 */
async function whileTerminating(
  admin: pg.Client,
  rounds: number,
  intervalMs: number,
  work: (running: () => boolean) => Promise<unknown>,
): Promise<void> {
  let done = false;
  const killer = (async () => {
    for (let i = 0; i < rounds; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
      await terminateAppConnections(admin);
    }
    done = true;
  })();
  await Promise.all([killer, work(() => !done)]);
}

interface Submission {
  name: string;
  res: request.Response;
}

function tally(submissions: Submission[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { res } of submissions) counts[res.status] = (counts[res.status] ?? 0) + 1;
  return counts;
}

describeWithDatabaseServer('database faults (issue 14)', () => {
  const figures: Record<string, Record<number, number>> = {};
  let admin: pg.Client;
  let users: RegisteredUser[];
  const logs: string[] = [];

  // Before the suite's own (after-hooks run in the order they are declared): the admin session ends before the
  // database is dropped under it.
  afterAll(async () => {
    process.stdout.write(`database fault figures: ${JSON.stringify(figures)}\n`);
    await admin?.end();
  });

  const { db, t } = useTestSuite({
    env: {
      RATE_LIMIT_ENABLED: 'false',
      DATABASE_STATEMENT_TIMEOUT_SECONDS: '1',
      DATABASE_POOL_WAIT_SECONDS: '1',
      DATABASE_POOL_SIZE: '4',
    },
    logDestination: { write: (line: string) => void logs.push(line) },
  });

  beforeAll(async () => {
    users = [];
    for (let i = 0; i < 6; i += 1) users.push(await registerUser(t.http));
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });

  beforeEach(() => {
    logs.splice(0);
  });

  /** After a fault: files of every row exist, and a sweep (no grace) leaves no unreferenced file. */
  async function expectMediaConsistent(): Promise<void> {
    const referenced = await referencedMediaKeys(db.url);
    for (const key of referenced) expect(existsSync(join(t.config.mediaRoot, key))).toBe(true);
    await t.app.get(OrphanMediaSweep).sweep(0);
    expect(await mediaFiles(t)).toEqual([...new Set(referenced)].sort());
  }

  /** Each outcome is one of `allowed`; the app's error log lines explain any other. */
  function expectOnly(outcomes: request.Response[], allowed: number[]): void {
    const unexpected = outcomes.filter((res) => !allowed.includes(res.status));
    const errors = logs.filter((line) => line.includes('"level":50'));
    expect({ unexpected: unexpected.map((res) => res.status), errors }).toEqual({
      unexpected: [],
      errors: [],
    });
    for (const res of outcomes) if (res.status === 503) expectUnavailable(res);
  }

  /**
   * A 503 to a submission means "not saved, try again" unless the connection died during its COMMIT (logged as an
   * unknown outcome): a 503 for a saved row whose outcome was known is the duplicate-on-retry bug.
   */
  async function expectNoSavedSubmissionRefused(submissions: Submission[]): Promise<void> {
    const { rows } = await admin.query<{ name: string }>('SELECT name FROM libraries');
    const stored = new Set(rows.map((row) => row.name));
    const refusedButSaved = submissions.filter(
      ({ name, res }) => res.status === 503 && stored.has(name),
    );
    const unknownOutcomes = logs.filter((line) => line.includes('outcome unknown')).length;
    const warnings = logs.filter((line) => line.includes('"level":40'));
    expect({ excess: Math.max(0, refusedButSaved.length - unknownOutcomes), warnings }).toEqual({
      excess: 0,
      warnings,
    });
    for (const { name, res } of submissions)
      if (res.status === 201) expect(stored.has(name)).toBe(true);
  }

  async function submit(user: RegisteredUser, name: string): Promise<Submission> {
    return { name, res: await submitLibrary(t.http, user.access, submissionFields({ name })) };
  }

  function expectUnavailable(res: request.Response): void {
    expect(res.body).toEqual(UNAVAILABLE);
    expect(res.headers['retry-after']).toBe('5');
  }

  it('10 terminations of its connections under 6 concurrent submitters: 201 or 503 only, every row has its files', async () => {
    const submissions: Submission[] = [];
    let round = 0;
    await whileTerminating(admin, 10, 150, (running) =>
      Promise.all(
        users.map(async (user, index) => {
          while (running()) submissions.push(await submit(user, `Fault ${index}-${(round += 1)}`));
        }),
      ),
    );
    expectOnly(
      submissions.map(({ res }) => res),
      [201, 503],
    );
    await expectNoSavedSubmissionRefused(submissions);
    figures.terminated = tally(submissions);
    // The faults hit submissions in flight, and the others went through.
    expect(figures.terminated[201]).toBeGreaterThan(0);
    expect(figures.terminated[503]).toBeGreaterThan(0);
    await expectMediaConsistent();
  });

  it('connections terminated right after COMMIT: the submission still answers 201 with its files', async () => {
    await admin.query(`
      CREATE FUNCTION notify_library_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('library_committed', NEW.id::text); RETURN NEW; END $$;
      CREATE TRIGGER library_committed AFTER INSERT ON libraries
        FOR EACH ROW EXECUTE FUNCTION notify_library_insert();
    `);
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    let terminations = 0;
    const pending: Promise<unknown>[] = [];
    // NOTIFY is delivered when the inserting transaction commits: end the app's sessions that very moment,
    // before it reads the row back.
    listener.on('notification', () => {
      pending.push(terminateAppConnections(admin, [pid]).then((n) => (terminations += n)));
    });
    await listener.query('LISTEN library_committed');
    const [{ pid }] = (await listener.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
      .rows;
    try {
      const submissions: Submission[] = [];
      for (let i = 0; i < 6; i += 1) submissions.push(await submit(users[i], `After commit ${i}`));
      // The last commit's notification may reach the listener after its submission answered: stop listening
      // (the server delivers what was notified before UNLISTEN answers) and let every termination finish, so none
      // ends a connection the checks below open.
      await listener.query('UNLISTEN *');
      await Promise.all(pending);
      expect(terminations).toBeGreaterThan(0);
      expectOnly(
        submissions.map(({ res }) => res),
        [201, 503],
      );
      // The read after COMMIT is tried again on another connection: a saved submission answers 201.
      await expectNoSavedSubmissionRefused(submissions);
      figures.afterCommit = tally(submissions);
      await expectMediaConsistent();
    } finally {
      await listener.end();
      await admin.query(
        `DROP TRIGGER library_committed ON libraries; DROP FUNCTION notify_library_insert()`,
      );
    }
  });

  it('a held lock trips statement_timeout: 503 envelope, the photo files removed (nothing committed)', async () => {
    const before = await mediaFiles(t);
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE libraries IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      const submission = await submitLibrary(t.http, users[0].access);
      expect(submission.status).toBe(503);
      expectUnavailable(submission);
      const list = await request(t.http).get('/api/v1/libraries/');
      expect(list.status).toBe(503);
      expectUnavailable(list);
      expect(Date.now() - started).toBeLessThan(8_000);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    expect(await mediaFiles(t)).toEqual(before);
    await expectMediaConsistent();
  });

  it('every pool connection busy: the next request waits DATABASE_POOL_WAIT_SECONDS, then 503', async () => {
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE libraries IN ACCESS EXCLUSIVE MODE');
      // Four list requests hold the four pool connections (each waits on the lock until statement_timeout).
      const holders = Array.from({ length: 4 }, () => request(t.http).get('/api/v1/libraries/'));
      const pending = Promise.all(holders.map((req) => req.then((res) => res)));
      const started = Date.now();
      // `latest` reads the locked table (`countries` no longer does: it reads library_country_counts, issue 22).
      const waiting = await request(t.http).get('/api/v1/libraries/latest');
      expect(waiting.status).toBe(503);
      expectUnavailable(waiting);
      expect(Date.now() - started).toBeLessThan(5_000);
      for (const res of await pending) expect(res.status).toBe(503);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    expect((await request(t.http).get('/api/v1/libraries/')).status).toBe(200);
  });

  it('community photos and reports keep their files through terminated connections', async () => {
    const { slug } = await insertLibrary(db.url, { status: 'approved' });
    const outcomes: request.Response[] = [];
    const photo = await defaultPhoto();
    await whileTerminating(admin, 6, 120, (running) =>
      Promise.all(
        users.slice(0, 4).map(async (user, index) => {
          for (let i = 0; running(); i += 1) {
            outcomes.push(
              await postPhoto(t.http, user.access, slug, { caption: `c${index}-${i}` }),
            );
            outcomes.push(
              await request(t.http)
                .post(`/api/v1/libraries/${slug}/report`)
                .set('Authorization', `Bearer ${user.access}`)
                .field('reason', 'other')
                .attach('photo', photo, { filename: 'p.jpg', contentType: 'image/jpeg' }),
            );
          }
        }),
      ),
    );
    expectOnly(outcomes, [201, 400, 503]);
    await expectMediaConsistent();
  });
});

describeWithDatabaseServer('orphan media sweep (issue 14)', () => {
  const { db, t } = useTestSuite({ env: { MEDIA_SWEEP_GRACE_HOURS: '2' } });

  it('removes only files that are unreferenced and older than the grace period; one sweeper at a time', async () => {
    const media = t.app.get(MediaStorage);
    const sweep = t.app.get(OrphanMediaSweep);
    const jpeg = await defaultPhoto();
    const keys = {
      referenced: 'libraries/aa/referenced.jpg',
      staged: 'libraries/aa/staged.jpg',
      orphan: 'libraries/bb/orphan.jpg',
      young: 'libraries/bb/young.jpg',
      partial: 'libraries/bb/orphan.jpg.1f0e.tmp',
      communityOrphan: 'photos/cc/orphan.jpg',
      // Generated files outside the photo folders keep their own retention.
      exported: 'exports/bookcases-1.geojson',
    };
    for (const key of Object.values(keys)) await media.put(key, jpeg, 'image/jpeg');
    await insertLibrary(db.url, {
      photo_key: keys.referenced,
      thumbnail_key: keys.referenced,
    });
    await withClient(db.url, (client) =>
      client.query(`UPDATE libraries SET pending_photo = $1 WHERE photo_key = $2`, [
        JSON.stringify({ photo_key: keys.staged, thumbnail_key: keys.staged }),
        keys.referenced,
      ]),
    );
    const threeHoursAgo = new Date(Date.now() - 3 * 3_600_000);
    for (const key of [
      keys.referenced,
      keys.staged,
      keys.orphan,
      keys.partial,
      keys.communityOrphan,
      keys.exported,
    ]) {
      utimesSync(join(t.config.mediaRoot, key), threeHoursAgo, threeHoursAgo);
    }

    // Another instance sweeping (holding the advisory lock): this one skips.
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      await other.query('SELECT pg_advisory_lock($1)', [SWEEP_LOCK_KEY]);
      expect(await sweep.sweep()).toBeNull();
    } finally {
      await other.end();
    }

    const result = await sweep.sweep();
    expect(result?.removed.sort()).toEqual(
      [keys.orphan, keys.partial, keys.communityOrphan].sort(),
    );
    expect(result?.checked).toBe(5);
    expect(await mediaFiles(t)).toEqual(
      [keys.referenced, keys.staged, keys.young, keys.exported].sort(),
    );
  });
});
