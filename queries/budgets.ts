/**
 * Budget statements (issue 14): the set in force (newest of `budget_versions`), the spend
 * aggregate a budget ledger is rebuilt from at start (one query), and the recorded decisions
 * newest first (GET /v1/budget/decisions). Migration 010.
 */
import { z } from 'zod';
import { BudgetLedger, periodKey, periodStartMs, type Budget, type SpendCell } from './budget-math.ts';
import { budgetFiguresSchema, budgetSetSchema, type BudgetDecisions, type BudgetList } from './budget-schemas.ts';
import { cursorCodec, msKey, uuidKey } from './cursor.ts';
import { chTime, isoTime, pageOf, PAGE_PARAM_DOCS, runQuery, windowParams, type QueryContext, type QuerySpec, type StatementRunner, type TimeWindow } from './sql.ts';

/** The newest version of the budget set. */
export const BUDGET_SET_LATEST: QuerySpec = {
  name: 'budget_set_latest',
  description: 'The budget set in force: the newest version of budget_versions.',
  sql: `SELECT version, budgets FROM {db:Identifier}.budget_versions ORDER BY version DESC LIMIT 1`,
  params: { db: 'database of the segments (Identifier)' },
};

/** Spend per (agent, tool, task, UTC day) since a time: what a ledger is rebuilt from. */
export const BUDGET_SPEND_CELLS: QuerySpec = {
  name: 'budget_spend_cells',
  description: 'SUM(cost_usd) of the stored calls per agent, tool, task and UTC day since `from` (the start of the current UTC month).',
  sql: `SELECT toString(agent_id) AS agent_id, toString(tool_id) AS tool_id, task_id, toUnixTimestamp(toStartOfDay(created_at, 'UTC')) * 1000 AS day_ms,
  sum(ifNull(cost_usd, 0)) AS cost
FROM {db:Identifier}.tool_invocations
WHERE created_at >= {from:DateTime64(3, 'UTC')}
GROUP BY agent_id, tool_id, task_id, day_ms`,
  params: { db: 'database of the segments (Identifier)', from: "inclusive lower bound of created_at, 'YYYY-MM-DD hh:mm:ss.sss' UTC" },
};

/** A page of recorded decisions, newest first. */
export const BUDGET_DECISIONS: QuerySpec = {
  name: 'budget_decisions',
  description: 'Budget check decisions, newest first (decided_at, then decision_id, descending), with the request and the figures seen.',
  sql: `SELECT toString(decision_id) AS id, toUnixTimestamp64Milli(decided_at) AS decided_ms, toString(agent_id) AS agent_id, toString(tool_id) AS tool_id,
  task_id, call_id, projected_cost_usd, toString(decision) AS decision, budgets, budget_version, key_id
FROM {db:Identifier}.budget_decisions
WHERE decided_at >= {from:DateTime64(3, 'UTC')} AND decided_at < {to:DateTime64(3, 'UTC')}
  AND ({decision:String} = '' OR toString(decision) = {decision:String})
  AND (NOT {has_cursor:Bool} OR (decided_at, decision_id) < ({c_at:DateTime64(3, 'UTC')}, toUUID({c_id:String})))
ORDER BY decided_at DESC, decision_id DESC
LIMIT 1 BY decision_id
LIMIT {limit:UInt32}`,
  params: {
    db: 'database of the segments (Identifier)',
    from: "inclusive lower bound of decided_at, 'YYYY-MM-DD hh:mm:ss.sss' UTC",
    to: 'exclusive upper bound of decided_at, same format',
    decision: "only 'allow', 'warn' or 'deny'; '' for all",
    ...PAGE_PARAM_DOCS,
    c_at: 'decided_at of the last decision of the previous page',
    c_id: 'decision_id of the last decision of the previous page',
  },
};

/** The set in force, or null before any was applied. */
export async function latestBudgetSet(ch: StatementRunner, db: string, ctx: QueryContext): Promise<{ version: number; budgets: Budget[] } | null> {
  const [row] = await runQuery<{ version: string | number; budgets: string }>(ch, BUDGET_SET_LATEST, { db }, ctx);
  if (!row) return null;
  return { version: Number(row.version), budgets: budgetSetSchema.parse(JSON.parse(row.budgets)) as Budget[] };
}

/** The stored spend of the month of `nowMs` per (agent, tool, task, UTC day): late calls of earlier months count in no current period. */
export async function loadSpendCells(ch: StatementRunner, db: string, nowMs: number, ctx: QueryContext): Promise<SpendCell[]> {
  const rows = await runQuery<{ agent_id: string; tool_id: string; task_id: string; day_ms: string | number; cost: number }>(
    ch,
    BUDGET_SPEND_CELLS,
    { db, from: chTime(periodStartMs('month', nowMs)) },
    ctx,
  );
  return rows.map((r) => ({ agent_id: r.agent_id, tool_id: r.tool_id, task_id: r.task_id, dayMs: Number(r.day_ms), cost: Number(r.cost) }));
}

/** GET /v1/budgets from a ledger: every budget with its figures for the current period. */
export function budgetListOf(ledger: BudgetLedger, version: number | null, nowMs: number): BudgetList {
  return {
    version,
    budgets: ledger.figures(nowMs).map(({ budget, ...f }) => ({ ...f, scope: budget.scope, period: budget.period, period_key: periodKey(budget.period, nowMs) })),
  };
}

/** GET /v1/budgets without a budget service (a process that serves no checks): spend from ClickHouse, nothing reserved. */
export async function budgetListFromStore(ch: StatementRunner, db: string, nowMs: number, ctx: QueryContext): Promise<BudgetList> {
  const set = await latestBudgetSet(ch, db, ctx);
  const ledger = new BudgetLedger(0);
  ledger.setBudgets(set?.budgets ?? []);
  if (set?.budgets.length) ledger.addCells(await loadSpendCells(ch, db, nowMs, ctx));
  return budgetListOf(ledger, set?.version ?? null, nowMs);
}

/** Parameters of {@link budgetDecisions}. */
export interface BudgetDecisionsParams {
  window: TimeWindow;
  limit: number;
  decision?: 'allow' | 'warn' | 'deny';
  cursor?: string;
}

const cursor = cursorCodec('budget_decisions', z.tuple([msKey, uuidKey]));

interface DecisionRow {
  id: string;
  decided_ms: string | number;
  agent_id: string;
  tool_id: string;
  task_id: string;
  call_id: string;
  projected_cost_usd: number;
  decision: 'allow' | 'warn' | 'deny';
  budgets: string;
  budget_version: string | number;
  key_id: string;
}

/** Recorded decisions, newest first, paged. */
export async function budgetDecisions(ch: StatementRunner, db: string, p: BudgetDecisionsParams, ctx: QueryContext): Promise<BudgetDecisions> {
  const after = p.cursor === undefined ? undefined : cursor.decode(p.cursor);
  const params = { db, ...windowParams(p.window), decision: p.decision ?? '', has_cursor: after !== undefined, c_at: chTime(after?.[0] ?? 0), c_id: after?.[1] ?? '00000000-0000-0000-0000-000000000000', limit: p.limit + 1 };
  const page = pageOf(await runQuery<DecisionRow>(ch, BUDGET_DECISIONS, params, ctx), p.limit);
  const last = page.rows[page.rows.length - 1];
  return {
    decisions: page.rows.map((r) => ({
      decision_id: r.id,
      decided_at: isoTime(r.decided_ms),
      request: { agent_id: r.agent_id, tool_id: r.tool_id, task_id: r.task_id || null, call_id: r.call_id || null, projected_cost_usd: r.projected_cost_usd },
      decision: r.decision,
      budgets: z.array(budgetFiguresSchema).parse(JSON.parse(r.budgets)),
      budget_version: Number(r.budget_version),
      key_id: r.key_id,
    })),
    next_cursor: page.more && last ? cursor.encode([Number(last.decided_ms), last.id]) : null,
  };
}
