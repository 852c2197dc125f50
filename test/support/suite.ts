/**
 * One set-up for e2e suites: the outside-service fakes a suite needs, a database of its own (cloned from the
 * migrated template) and the real app on it, started before the enclosing `describe`'s tests and stopped after
 * them (app first, then the database, then the fakes, whatever failed on the way).
 *
 *   const suite = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });
 *   it('…', async () => { await request(suite.http).get('/api/v1/…'); });
 *
 * Suites written before the helper keep their `db` / `t` variables and bind them once the suite is up:
 *
 *   let db: TestDatabase;
 *   let t: TestApp;
 *   useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } }, (s) => ({ db, t } = s));
 */
import { createTestApp, type TestApp, type TestAppOptions } from './app.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/** A started fake (loopback server, own Redis, …): anything with `close()` or `stop()`. */
export type StartedFake = { close(): unknown } | { stop(): unknown };

export interface TestSuiteOptions<F extends Record<string, StartedFake>> extends Omit<
  TestAppOptions,
  'databaseUrl' | 'env'
> {
  /** Starts the fakes before the database and the app; each is stopped after the app. */
  fakes?: () => Promise<F>;
  /** The app's environment, possibly from the fakes (their URLs). */
  env?:
    | Record<string, string>
    | ((fakes: F) => Record<string, string> | Promise<Record<string, string>>);
}

export interface TestSuite<F extends Record<string, StartedFake> = Record<string, never>> {
  readonly db: TestDatabase;
  readonly t: TestApp;
  readonly fakes: F;
  /** The app's HTTP server, for supertest. */
  readonly http: TestApp['http'];
}

async function stopFake(fake: StartedFake): Promise<void> {
  if ('close' in fake) await fake.close();
  else await fake.stop();
}

/**
 * Registers the `beforeAll` that starts the suite and the `afterAll` that stops it, in the enclosing describe.
 * `ready` runs once everything is up (before the describe's own `beforeAll` hooks declared after this call).
 */
export function useTestSuite<F extends Record<string, StartedFake> = Record<string, never>>(
  options: TestSuiteOptions<F> = {},
  ready?: (suite: TestSuite<F>) => unknown,
): TestSuite<F> {
  const state: { db?: TestDatabase; t?: TestApp; fakes?: F } = {};
  const started = <T>(value: T | undefined, name: string): T => {
    if (value === undefined)
      throw new Error(`the test suite's ${name} is not started yet (use it in a hook or test)`);
    return value;
  };
  const suite: TestSuite<F> = {
    get db() {
      return started(state.db, 'database');
    },
    get t() {
      return started(state.t, 'app');
    },
    get fakes() {
      return started(state.fakes, 'fakes');
    },
    get http() {
      return started(state.t, 'app').http;
    },
  };

  beforeAll(async () => {
    const { fakes: startFakes, env, ...appOptions } = options;
    state.fakes = startFakes ? await startFakes() : ({} as F);
    state.db = await createTestDatabase();
    state.t = await createTestApp({
      ...appOptions,
      databaseUrl: state.db.url,
      env: typeof env === 'function' ? await env(state.fakes) : env,
    });
    ready?.(suite);
  });

  afterAll(async () => {
    const problems: unknown[] = [];
    const attempt = async (step: () => Promise<unknown> | undefined) => {
      try {
        await step();
      } catch (error) {
        problems.push(error);
      }
    };
    await attempt(() => state.t?.close());
    await attempt(() => state.db?.drop());
    for (const fake of Object.values(state.fakes ?? {})) await attempt(() => stopFake(fake));
    if (problems.length) throw problems[0];
  });

  return suite;
}
