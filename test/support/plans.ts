import type pg from 'pg';
import { withClient } from './database.js';

/** The nodes of an `EXPLAIN (FORMAT JSON)` plan that the suites checking query plans read. */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Subplan Name'?: string;
  'Actual Loops'?: number;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

/** `plan` and every node below it, depth first. */
export function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

/** How many executions of `client`'s prepared statement `name` PostgreSQL ran on its generic plan. */
export async function genericPlans(client: pg.Client, name: string): Promise<number> {
  const { rows } = await client.query<{ generic_plans: string }>(
    'SELECT generic_plans FROM pg_prepared_statements WHERE name = $1',
    [name],
  );
  return Number(rows[0].generic_plans);
}

/**
 * Runs `statement` prepared as `name` and unprepared on `client`: both must give the same rows (`label`, any value,
 * says which run differed).
 */
export async function expectPreparedAsFresh(
  client: pg.Client,
  name: string,
  statement: { text: string; params: unknown[] },
  label?: unknown,
): Promise<void> {
  const prepared = await client.query({ name, text: statement.text, values: statement.params });
  const fresh = await client.query(statement.text, statement.params);
  expect({ label, rows: prepared.rows }).toEqual({ label, rows: fresh.rows });
}

/**
 * The plan of `statement` as it runs on its generic plan: prepared as `name` on a connection of its own with
 * plan_cache_mode = force_generic_plan, then `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE` with its values as literals.
 */
export async function explainGeneric(
  url: string,
  statement: { text: string; params: unknown[] },
  name = 'explained',
): Promise<PlanNode> {
  return withClient(url, async (client) => {
    await client.query('SET plan_cache_mode = force_generic_plan');
    await client.query({ name, text: statement.text, values: statement.params });
    const values = statement.params.map((value) => `'${String(value).replace(/'/g, "''")}'`);
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE ${name}(${values.join(', ')})`,
    );
    return rows[0]['QUERY PLAN'][0].Plan;
  });
}

/** How many times the nodes of `plan` scanned `index` (their actual loops, summed). */
export function indexLoops(plan: PlanNode, index: string): number {
  return nodesOf(plan)
    .filter((node) => node['Index Name'] === index)
    .reduce((sum, node) => sum + (node['Actual Loops'] ?? 0), 0);
}
