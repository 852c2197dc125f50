/**
 * Shared set-up of the map-contribution e2e suites: the app's environment against the loopback fake map server,
 * staff/user helpers, libraries submitted through the API (origin `user`) and approved through the moderation API,
 * and positions far enough apart that one library's map check never sees another's node.
 */
import type { DestinationStream } from 'pino';
import request from 'supertest';
import type { EventRow } from '../../src/map-contribution/contribution-rows.js';
import type { TestApp } from '../support/app.js';
import {
  bearer,
  makeStaff,
  registerUser,
  type HttpTarget,
  type NewUserFields,
  type RegisteredUser,
} from '../support/auth.js';
import { queryRows, withClient, type TestDatabase } from '../support/database.js';
import { FakeMapServer } from '../support/fake-map-server.js';
import { createLibrary, type FormFields } from '../support/libraries.js';
import { useTestSuite, type TestSuite } from '../support/suite.js';

export const BASE = '/api/v1/admin/map-contributions';
export const MAP_TOKEN = 'mapdb-secret-token-7Qx2Zr94';
export const USER_AGENT = 'bookcase-test/1.0 (+https://example.org/contact)';
export const PLAN_URL = 'https://wiki.example.org/wiki/Bookcase_Directory_import';
export const ALL_GATES = 'plan,community,licence,consent_copy,attribution,rollback';
export const SOURCE_WORDING = 'survey; individually reviewed user submission (Bookcase Directory)';
export const CREATED_BY = 'bookcase-directory/0.1.0';

export { NOT_FOUND, STAFF_REQUIRED as STAFF_ONLY, UNAUTHORIZED } from '../support/errors.js';

/** Degrees of latitude per metre on the mean Earth sphere (the fake and the client both use it). */
export const DEG_PER_M = 180 / (Math.PI * 6_371_008.8);

/** The environment of an app with writes fully enabled against `fake` (override any of it). */
export function writeEnv(
  fake: FakeMapServer,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    RATE_LIMIT_ENABLED: 'false',
    MAPDB_WRITE_ENABLED: 'true',
    MAPDB_API_BASE_URL: fake.url,
    MAPDB_OAUTH_ACCESS_TOKEN: MAP_TOKEN,
    MAPDB_QUERY_URL: fake.queryUrl,
    MAPDB_USER_AGENT: USER_AGENT,
    MAPDB_PLAN_URL: PLAN_URL,
    MAPDB_LAUNCH_GATES: ALL_GATES,
    ...overrides,
  };
}

/** What most suites start from: the fake map server, a database of their own, an app writing to the fake, a staff
 * member and a submitter (handles, readable in hooks and tests), and more apps on the same database. */
export interface MapSuite {
  fake: FakeMapServer;
  db: TestDatabase;
  t: TestApp;
  staff: RegisteredUser;
  owner: RegisteredUser;
  startApp: TestSuite['startApp'];
}

/**
 * Registers the hooks that start a MapSuite before the enclosing describe's tests and stop it after them. `fake`
 * is there at once (suites configure it); with `resetFake` it is reset before each test.
 */
export function mapSuite(
  options: {
    env?: Record<string, string>;
    logDestination?: DestinationStream;
    owner?: NewUserFields;
    resetFake?: boolean;
  } = {},
): MapSuite {
  const fake = new FakeMapServer({ token: MAP_TOKEN });
  // Held map requests are let go before the app stops.
  afterAll(() => fake.release());
  const { db, t, users, startApp } = useTestSuite({
    fakes: async () => {
      await fake.start();
      return { fake };
    },
    env: () => writeEnv(fake, options.env),
    logDestination: options.logDestination,
    users: { staff: 'staff', owner: options.owner ?? 'user' },
  });
  if (options.resetFake) beforeEach(() => fake.reset());
  return { fake, db, t, startApp, ...users };
}

/** A refused confirm's body: 409 with these blockers. */
export const refusal = (...blockers: string[]) => ({
  message: expect.any(String),
  details: { blockers: blockers.map((code) => ({ code, message: expect.any(String) })) },
});

/**
 * A library ready to confirm: submitted, approved and checked (no_match), with the detail answering eligible and no
 * blockers; the fake's log emptied.
 */
export async function eligibleLibrary(
  suite: Pick<MapSuite, 'fake' | 't' | 'staff' | 'owner'>,
  fields: FormFields = {},
): Promise<SubmittedLibrary> {
  const { fake, t, staff, owner } = suite;
  const lib = await submitLibrary(t.http, owner, staff, fields);
  await checkPasses(t.http, staff, lib.slug);
  const detail = await adminGet(t.http, staff.access, `/${lib.slug}`);
  expect([detail.body.eligible, detail.body.blockers]).toEqual([true, []]);
  fake.reset();
  return lib;
}

/** Log lines captured from the app (createTestApp `logDestination`). */
export function captureLogs(): { stream: DestinationStream; lines: string[] } {
  const lines: string[] = [];
  return { lines, stream: { write: (line: string) => void lines.push(line) } };
}

export async function registerStaff(
  http: HttpTarget,
  databaseUrl: string,
): Promise<RegisteredUser> {
  const staff = await registerUser(http);
  await makeStaff(databaseUrl, staff.id);
  return staff;
}

export function adminGet(http: HttpTarget, token: string | null, path: string) {
  const req = request(http).get(`${BASE}${path}`);
  return token ? req.set('Authorization', bearer(token)) : req;
}

export function adminPost(http: HttpTarget, token: string | null, path: string, body?: object) {
  const req = request(http).post(`${BASE}${path}`);
  const authed = token ? req.set('Authorization', bearer(token)) : req;
  return body === undefined ? authed : authed.send(body);
}

let positions = 0;
/** A fresh point ~2.2 km north of the last one (so map checks of different libraries never meet). */
export function nextPosition(): { latitude: number; longitude: number } {
  positions += 1;
  return { latitude: 47 + positions * 0.02, longitude: 7.85 };
}

export interface SubmittedLibrary {
  id: number;
  slug: string;
  lat: number;
  lng: number;
  body: Record<string, unknown>;
}

/**
 * POST /libraries/ as `owner` (multipart, origin `user`) with the permission true unless overridden (pass
 * `mapdb_submission_allowed: undefined` to omit it), then — unless `approve` is false — approval through
 * PATCH /libraries/moderation/{slug} as `staff`.
 */
export async function submitLibrary(
  http: HttpTarget,
  owner: RegisteredUser,
  staff: RegisteredUser,
  fields: FormFields = {},
  approve = true,
): Promise<SubmittedLibrary> {
  const position = nextPosition();
  const body = await createLibrary(http, owner.access, {
    ...position,
    mapdb_submission_allowed: true,
    ...fields,
  });
  if (approve) await moderate(http, staff, body.slug, { status: 'approved' });
  return {
    id: body.id,
    slug: body.slug,
    lat: Number(fields.latitude ?? position.latitude),
    lng: Number(fields.longitude ?? position.longitude),
    body,
  };
}

export async function moderate(
  http: HttpTarget,
  staff: RegisteredUser,
  slug: string,
  body: { status: string; rejection_reason?: string },
): Promise<void> {
  const res = await request(http)
    .patch(`/api/v1/libraries/moderation/${slug}`)
    .set('Authorization', bearer(staff.access))
    .send(body);
  if (res.status !== 200) {
    throw new Error(`moderate: PATCH answered ${res.status} ${JSON.stringify(res.body)}`);
  }
}

/** A passed duplicate check (POST /{slug}/check answering no_match). */
export async function checkPasses(http: HttpTarget, staff: RegisteredUser, slug: string) {
  const res = await adminPost(http, staff.access, `/${slug}/check`);
  if (res.status !== 200 || res.body.status !== 'no_match') {
    throw new Error(`checkPasses: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body;
}

export const codes = (body: { blockers: { code: string }[] }): string[] =>
  body.blockers.map((blocker) => blocker.code);

/** The contribution row of a library (every column, ids as numbers), or undefined. */
export async function contributionRow(
  databaseUrl: string,
  libraryId: number,
): Promise<Record<string, unknown> | undefined> {
  const rows = await queryRows(
    databaseUrl,
    `SELECT *, mapdb_element_id::int AS mapdb_element_id, changeset_id::int AS changeset_id
     FROM map_contributions WHERE library_id = $1`,
    [libraryId],
  );
  return rows[0];
}

/** An event as the repository reads it, without its time. */
export type EventRecord = Omit<EventRow, 'created_at'>;

export async function eventRows(databaseUrl: string, libraryId: number): Promise<EventRecord[]> {
  return queryRows<EventRecord>(
    databaseUrl,
    `SELECT event_type, outcome, actor_id, actor_username, attempt_key, details
     FROM map_contribution_events WHERE library_id = $1 ORDER BY id`,
    [libraryId],
  );
}

export async function sql(databaseUrl: string, text: string, params: unknown[] = []) {
  return withClient(databaseUrl, (client) => client.query(text, params));
}

/** Empties the fake's request log and scripts, keeping its changesets and nodes (unlike `reset`). */
export function clearLog(fake: FakeMapServer): void {
  fake.requests.splice(0);
  fake.clearScripts();
}

/**
 * The most changesets the fake ever held open at once, replayed from its request log (create opens one when it
 * answered, close closes it).
 */
export function maxOpenChangesets(fake: FakeMapServer): number {
  let open = 0;
  let max = 0;
  for (const req of fake.requests) {
    if (req.endpoint === 'changeset.create') open += 1;
    if (req.endpoint === 'changeset.close') open -= 1;
    max = Math.max(max, open);
  }
  return max;
}
