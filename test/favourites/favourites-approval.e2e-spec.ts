/**
 * The favourites page reads `favourites.library_approved`, a copy of the library's approval kept by triggers
 * (migration 1765800000000, issue 22). These tests hold it to the truth: after status changes of every kind,
 * bulk changes, and a favourite added while its library is being rejected, the flag equals a recount from
 * `libraries`, and the page and its total show exactly the approved favourites.
 */
import pg from 'pg';
import request from 'supertest';
import { bearer, registerUser, type RegisteredUser } from '../support/auth.js';
import type { TestApp } from '../support/app.js';
import { setLibraryStatus } from '../support/community.js';
import { withClient, type TestDatabase } from '../support/database.js';
import { insertLibraries, type InsertedLibrary } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

describe('favourites follow their libraries’ approval', () => {
  let db: TestDatabase;
  let t: TestApp;
  let alice: RegisteredUser;

  useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } }, (s) => ({ db, t } = s));

  beforeAll(async () => {
    alice = await registerUser(t.http);
  });

  const favourite = (slug: string) =>
    request(t.http)
      .post(`/api/v1/libraries/${slug}/favourite`)
      .set('Authorization', bearer(alice.access));

  const page = async (pageSize = 50) => {
    const res = await request(t.http)
      .get(`/api/v1/libraries/favourites?page_size=${pageSize}`)
      .set('Authorization', bearer(alice.access))
      .expect(200);
    const body = res.body as { items: { slug: string }[]; pagination: { total: number } };
    return { slugs: body.items.map((item) => item.slug).sort(), total: body.pagination.total };
  };

  /** Favourites whose flag disagrees with their library's status (must always be none). */
  const drifted = () =>
    withClient(db.url, async (client) => {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM favourites f JOIN libraries l ON l.id = f.library_id
         WHERE f.library_approved IS DISTINCT FROM (l.status = 'approved')`,
      );
      return rows[0].n;
    });

  const approvedSlugs = (libraries: InsertedLibrary[]) =>
    withClient(db.url, async (client) => {
      const { rows } = await client.query<{ slug: string }>(
        `SELECT slug FROM libraries WHERE id = ANY($1::int[]) AND status = 'approved' ORDER BY slug`,
        [libraries.map((library) => library.id)],
      );
      return rows.map((row) => row.slug).sort();
    });

  it('shows exactly the approved favourites after rejections, re-approvals, bulk changes and deletions', async () => {
    const libraries = await insertLibraries(
      db.url,
      Array.from({ length: 8 }, (_, index) => ({ name: `Follow ${index}` })),
    );
    for (const library of libraries) await favourite(library.slug).expect(201);
    expect(await page()).toEqual({ slugs: await approvedSlugs(libraries), total: 8 });

    await setLibraryStatus(db.url, libraries[0].id, 'rejected');
    await setLibraryStatus(db.url, libraries[1].id, 'pending');
    expect(await page()).toEqual({ slugs: await approvedSlugs(libraries), total: 6 });

    await setLibraryStatus(db.url, libraries[0].id, 'approved');
    // One statement changing several libraries (a bulk moderation or an import).
    await withClient(db.url, (client) =>
      client.query(`UPDATE libraries SET status = 'rejected' WHERE id = ANY($1::int[])`, [
        [libraries[2].id, libraries[3].id, libraries[4].id],
      ]),
    );
    // An update that leaves the status alone changes nothing.
    await withClient(db.url, (client) =>
      client.query(`UPDATE libraries SET name = name || ' (renamed)' WHERE id = $1`, [
        libraries[5].id,
      ]),
    );
    await withClient(db.url, (client) =>
      client.query('DELETE FROM libraries WHERE id = $1', [libraries[6].id]),
    );
    const expected = await approvedSlugs(libraries);
    expect(expected).toHaveLength(3);
    expect(await page()).toEqual({ slugs: expected, total: 3 });
    // Pages of one: the total stays exact and every approved favourite appears once.
    const one = await page(1);
    expect(one.total).toBe(3);
    expect(await drifted()).toBe(0);
  });

  it('never keeps a stale flag when a favourite is added while its library is rejected', async () => {
    for (let round = 0; round < 10; round += 1) {
      const [library] = await insertLibraries(db.url, [{ name: `Race ${round}` }]);
      // The rejection holds the library's row until it commits; the favourite is added meanwhile.
      const rejecting = new pg.Client({ connectionString: db.url });
      await rejecting.connect();
      try {
        await rejecting.query('BEGIN');
        await rejecting.query(`UPDATE libraries SET status = 'rejected' WHERE id = $1`, [
          library.id,
        ]);
        const adding = withClient(db.url, (client) =>
          client.query(
            `INSERT INTO favourites (user_id, library_id) VALUES ($1, $2)
             ON CONFLICT DO NOTHING`,
            [alice.id, library.id],
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, 20));
        await rejecting.query('COMMIT');
        await adding;
      } finally {
        await rejecting.end();
      }
      expect(await drifted()).toBe(0);
    }
    // The other order: the favourite's transaction holds the library first, the rejection waits for it.
    for (let round = 0; round < 5; round += 1) {
      const [library] = await insertLibraries(db.url, [{ name: `Race b${round}` }]);
      const adding = new pg.Client({ connectionString: db.url });
      await adding.connect();
      try {
        await adding.query('BEGIN');
        await adding.query('INSERT INTO favourites (user_id, library_id) VALUES ($1, $2)', [
          alice.id,
          library.id,
        ]);
        const rejecting = setLibraryStatus(db.url, library.id, 'rejected');
        await new Promise((resolve) => setTimeout(resolve, 20));
        await adding.query('COMMIT');
        await rejecting;
      } finally {
        await adding.end();
      }
      expect(await drifted()).toBe(0);
    }
  });
});
