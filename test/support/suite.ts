/**
 * One set-up for e2e suites: the outside-service fakes a suite needs, a database of its own (cloned from the
 * migrated template), the real app on it and the users it signs in as, started before the enclosing `describe`'s
 * tests and stopped after them (apps first, then the database, then the fakes, whatever failed on the way).
 *
 *   const { t, db, staff } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' }, users: { staff: 'staff' } });
 *   it('…', async () => { await request(t.http).get('/api/v1/…').set('Authorization', bearer(staff.access)); });
 *
 * `db`, `t`, `fakes` and each user (also in `users`) are handles: they can be destructured at once and read
 * (`t.http`, `db.url`, `staff.access`) from hooks and tests, once the suite is up. `startApp` starts another app on
 * the same database (other settings, one per test …), stopped with the suite (if the test did not stop it). With `app: false` the suite is a
 * database (and fakes) only, for suites that start their own apps or processes on it.
 *
 * Suites that keep their own `db` / `t` variables can bind them once the suite is up:
 *
 *   useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } }, (s) => ({ db, t } = s));
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestApp, type TestApp, type TestAppOptions } from './app.js';
import { makeStaff, registerUser, type NewUserFields, type RegisteredUser } from './auth.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/** A started fake (loopback server, own Redis, …): anything with `close()`, `stop()` or `kill()`. */
export type StartedFake = { close(): unknown } | { stop(): unknown } | { kill(): unknown };

/** A user registered through the API once the app is up: `'user'`, `'staff'`, or own fields (and staff or not). */
export type SuiteUser = 'user' | 'staff' | (NewUserFields & { staff?: boolean });

/**
 * What another app of the suite takes: the suite's options apply unless given here (the database is the suite's);
 * `env` replaces the suite's environment, or derives from it when a function.
 */
export type SuiteAppOptions = Omit<TestAppOptions, 'databaseUrl' | 'env'> & {
  env?: Record<string, string> | ((suiteEnv: Record<string, string>) => Record<string, string>);
};

export interface TestSuiteOptions<
  F extends Record<string, StartedFake>,
  U extends string = never,
> extends Omit<TestAppOptions, 'databaseUrl' | 'env'> {
  /** Starts the fakes before the database and the app; each is stopped after the app. */
  fakes?: () => Promise<F>;
  /** The app's environment, possibly from the fakes (their URLs). */
  env?:
    | Record<string, string>
    | ((fakes: F) => Record<string, string> | Promise<Record<string, string>>);
  /** Users registered (in this order) once the app is up. */
  users?: Record<U, SuiteUser>;
  /** false: no app (the suite is the database and the fakes). */
  app?: boolean;
}

export interface TestSuite<
  F extends Record<string, StartedFake> = Record<string, never>,
  U extends string = never,
> {
  readonly db: TestDatabase;
  readonly t: TestApp;
  readonly fakes: F;
  /** The app's HTTP server, for supertest (read it in hooks and tests). */
  readonly http: TestApp['http'];
  readonly users: Record<U, RegisteredUser>;
  /** Another app on the suite's database (the suite's environment unless `options.env` is given), stopped with it. */
  readonly startApp: (options?: SuiteAppOptions) => Promise<TestApp>;
}

/** The suite's own fields, which a user cannot be named. */
const RESERVED: string[] = ['db', 't', 'fakes', 'http', 'users', 'startApp'];

async function stopFake(fake: StartedFake): Promise<void> {
  if ('close' in fake) await fake.close();
  else if ('stop' in fake) await fake.stop();
  else await fake.kill();
}

/**
 * A stand-in for an object that exists only later (once a `beforeAll` has run): every read goes to `read()`.
 * Methods are bound to the real object.
 */
export function lateBound<T extends object>(read: () => T): T {
  return new Proxy({} as T, {
    get: (_target, key) => {
      const real = read();
      const value: unknown = Reflect.get(real, key);
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(real)
        : value;
    },
    set: (_target, key, value) => Reflect.set(read(), key, value),
    has: (_target, key) => Reflect.has(read(), key),
    ownKeys: () => Reflect.ownKeys(read()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(read(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}

/**
 * Registers the `beforeAll` that starts the suite and the `afterAll` that stops it, in the enclosing describe.
 * `ready` runs once everything is up (before the describe's own `beforeAll` hooks declared after this call).
 */
export function useTestSuite<
  F extends Record<string, StartedFake> = Record<string, never>,
  U extends string = never,
>(
  options: TestSuiteOptions<F, U> = {},
  ready?: (suite: TestSuite<F, U>) => unknown,
): TestSuite<F, U> & Record<U, RegisteredUser> {
  const { fakes: startFakes, env, users: wanted, app: withApp = true, ...appOptions } = options;
  const state: {
    db?: TestDatabase;
    t?: TestApp;
    fakes?: F;
    env?: Record<string, string>;
    users: Partial<Record<U, RegisteredUser>>;
  } = { users: {} };
  const apps: TestApp[] = [];
  const started = <T>(value: T | undefined, name: string): T => {
    if (value === undefined)
      throw new Error(`the test suite's ${name} is not started yet (use it in a hook or test)`);
    return value;
  };
  const userNames = Object.keys(wanted ?? {}) as U[];
  const taken = userNames.filter((name) => RESERVED.includes(name));
  if (taken.length) throw new Error(`user names taken by the suite itself: ${taken.join(', ')}`);
  const users = Object.fromEntries(
    userNames.map((name) => [
      name,
      lateBound(() => started<RegisteredUser>(state.users[name], `user ${name}`)),
    ]),
  ) as Record<U, RegisteredUser>;
  const db = lateBound(() => started(state.db, 'database'));
  const t = lateBound(() => started(state.t, 'app'));
  // Each fake is a handle of its own, so `const { fakes: { redis } } = useTestSuite(…)` works at once.
  const fakes = new Proxy({} as F, {
    get: (_target, key) => lateBound(() => started(state.fakes, 'fakes')[key as keyof F]),
  });

  const startApp = async ({ env: ownEnv, ...more }: SuiteAppOptions = {}): Promise<TestApp> => {
    const app = await createTestApp({
      ...appOptions,
      ...more,
      env: typeof ownEnv === 'function' ? ownEnv(state.env ?? {}) : (ownEnv ?? state.env),
      databaseUrl: started(state.db, 'database').url,
    });
    // A test may close an app itself (a restart, a shutdown); the suite's close is then a no-op.
    const close = app.close.bind(app);
    let closing: Promise<void> | undefined;
    app.close = () => (closing ??= close());
    apps.push(app);
    return app;
  };

  const suite: TestSuite<F, U> = {
    db,
    t,
    fakes,
    users,
    startApp,
    get http() {
      return started(state.t, 'app').http;
    },
  };

  beforeAll(async () => {
    state.fakes = startFakes ? await startFakes() : ({} as F);
    state.db = await createTestDatabase();
    state.env = typeof env === 'function' ? await env(state.fakes) : env;
    if (withApp) state.t = await startApp();
    for (const name of userNames) {
      const spec = wanted![name];
      const { staff: _staff, ...fields } = typeof spec === 'object' ? spec : {};
      const user = await registerUser(state.t!.http, fields);
      if (spec === 'staff' || (typeof spec === 'object' && spec.staff)) {
        await makeStaff(state.db.url, user.id);
      }
      state.users[name] = user;
    }
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
    for (const app of apps.reverse()) await attempt(() => app.close());
    await attempt(() => state.db?.drop());
    for (const fake of Object.values(state.fakes ?? {})) await attempt(() => stopFake(fake));
    if (problems.length) throw problems[0];
  });

  return Object.assign(suite, users);
}

/** A folder of the suite's own under the system's temporary folder, as a fake: removed (with its files) with the suite. */
export function temporaryDirectory(prefix: string): { path: string; close(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, close: () => rmSync(path, { recursive: true, force: true }) };
}
