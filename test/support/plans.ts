/** The nodes of an `EXPLAIN (FORMAT JSON)` plan that the suites checking query plans read. */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Subplan Name'?: string;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** `plan` and every node below it, depth first. */
export function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}
