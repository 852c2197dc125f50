/**
 * The favourites page's statement (issue 22) is served by PostgreSQL's generic plan once prepared: planning it again
 * on every request was most of the page's PostgreSQL CPU at 1M libraries (0.34 ms of planning for 0.15 ms of
 * execution). A user with one favourite beside a user with many (the statistics from before the first user's
 * favourite, as autovacuum leaves them between two ANALYZEs) is the case where PostgreSQL judged every custom plan
 * cheaper than the generic one and never kept the generic plan.
 */
import { APPROVED_FAVOURITES_COUNT_AND_PAGE } from '../../src/favourites/favourites.repository.js';
import { withClient } from '../support/database.js';
import { insertLibraries } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

/** PostgreSQL plans a prepared statement with its parameters' values for the first five executions. */
const CUSTOM_PLANS_FIRST = 5;
const EXECUTIONS = 12;

describe('favourites page statement', () => {
  const { db, alice, bob } = useTestSuite({ users: { alice: 'user', bob: 'user' } });

  it('keeps the generic plan after the first custom plans, whoever asks', async () => {
    const libraries = await insertLibraries(
      db.url,
      Array.from({ length: 200 }, () => ({})),
    );
    await withClient(db.url, async (client) => {
      await client.query(
        'INSERT INTO favourites (user_id, library_id) SELECT $1, unnest($2::int[])',
        [bob.id, libraries.map((library) => library.id)],
      );
      await client.query('ANALYZE favourites');
      await client.query('INSERT INTO favourites (user_id, library_id) VALUES ($1, $2)', [
        alice.id,
        libraries[0].id,
      ]);
      for (let i = 0; i < EXECUTIONS; i += 1) {
        const { rows } = await client.query<{ total: number; id: number }>({
          name: 'favourites_page',
          text: APPROVED_FAVOURITES_COUNT_AND_PAGE,
          values: [alice.id, 20, 0],
        });
        expect(rows).toEqual([expect.objectContaining({ total: 1, id: libraries[0].id })]);
      }
      const { rows } = await client.query<{ generic_plans: string; custom_plans: string }>(
        "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'favourites_page'",
      );
      expect(rows).toEqual([
        {
          generic_plans: String(EXECUTIONS - CUSTOM_PLANS_FIRST),
          custom_plans: String(CUSTOM_PLANS_FIRST),
        },
      ]);
      // The planner cannot tell one user (or limit) from another, so a custom plan is the generic plan: the same
      // estimated cost, never cheaper, and PostgreSQL keeps the generic one.
      const planOf = async (mode: 'force_custom_plan' | 'force_generic_plan') => {
        await client.query(`SET plan_cache_mode = ${mode}`);
        const { rows: explained } = await client.query<{ 'QUERY PLAN': [{ Plan: unknown }] }>(
          `EXPLAIN (FORMAT JSON) EXECUTE favourites_page(${alice.id}, 20, 0)`,
        );
        await client.query('RESET plan_cache_mode');
        return explained[0]['QUERY PLAN'][0].Plan;
      };
      expect(await planOf('force_custom_plan')).toEqual(await planOf('force_generic_plan'));
      // Bob's page through the same prepared statement: 20 of his 200, from the 41st.
      const { rows: page } = await client.query<{ total: number; id: number }>({
        name: 'favourites_page',
        text: APPROVED_FAVOURITES_COUNT_AND_PAGE,
        values: [bob.id, 20, 40],
      });
      expect(page.map((row) => row.total)).toEqual(Array(20).fill(200));
    });
  });
});
