import type pg from 'pg';

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
