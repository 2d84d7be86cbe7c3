/**
 * Budget statements: the set in force (newest of `budget_versions`), the spend of
 * given budgets in their current periods (one aggregate, O(budgets) rows), and the recorded decisions
 * newest first (GET /v1/budget/decisions). Migration 010.
 */
import { z } from 'zod';
import { BudgetLedger, type LoadedSpend } from './ledger.ts';
import { countsModels, countsTools, periodKey, periodStartMs, type Budget } from './math.ts';
import { budgetFiguresSchema, budgetSetSchema, type BudgetDecisions, type BudgetList } from './schemas.ts';
import { cursorCodec, msKey, uuidKey } from '../cursor.ts';
import { chTime, isoTime, pageOf, PAGE_PARAM_DOCS, runQuery, windowParams, type QueryContext, type QuerySpec, type StatementRunner, type TimeWindow } from '../sql.ts';

/** The newest version of the budget set. */
export const BUDGET_SET_LATEST: QuerySpec = {
  name: 'budget_set_latest',
  description: 'The budget set in force: the newest version of budget_versions.',
  sql: `SELECT version, budgets FROM {db:Identifier}.budget_versions ORDER BY version DESC LIMIT 1`,
  params: { db: 'database of the segments (Identifier)' },
};

/**
 * The spend of given budgets in their current periods, one row per (budget, period): the budgets
 * come as parallel arrays, each with the bits of its scope (1 agent, 2 tool, 4 task). Each call of
 * the earliest period start on is keyed once per scope shape in use and joined to the budgets of
 * that key: one scan, O(budgets × periods) rows out, whatever the table holds.
 */
export const BUDGET_SPEND: QuerySpec = {
  name: 'budget_spend',
  description:
    'SUM(cost_usd) of the stored calls (and model turns, for a budget that counts them) in scope of each given budget, per UTC period from the start of its current period on, with the ids of the counted records stored in the last seen_ms (when with_seen).',
  sql: `SELECT k.budget_id AS budget_id,
  if(k.day, formatDateTime(t.created_at, '%Y-%m-%d', 'UTC'), formatDateTime(t.created_at, '%Y-%m', 'UTC')) AS period_key,
  sum(t.cost) AS spent,
  groupUniqArrayIf(t.id, {with_seen:Bool} AND t.ingested_at >= now64(3) - toIntervalMillisecond({seen_ms:UInt32})) AS seen
FROM (
  SELECT toString(call_id) AS id, 0 AS kind, created_at, ingested_at, cost_usd AS cost, arrayJoin({shapes:Array(UInt8)}) AS shape,
    if(bitTest(shape, 0), toString(agent_id), '') AS k_agent, if(bitTest(shape, 1), toString(tool_id), '') AS k_tool, if(bitTest(shape, 2), task_id, '') AS k_task
  FROM {db:Identifier}.tool_invocations
  WHERE {tools:Bool} AND created_at >= {from:DateTime64(3, 'UTC')} AND ifNull(cost_usd, 0) != 0
  UNION ALL
  SELECT toString(turn_id) AS id, 1 AS kind, created_at, ingested_at, cost_usd AS cost, arrayJoin({shapes:Array(UInt8)}) AS shape,
    if(bitTest(shape, 0), toString(agent_id), '') AS k_agent, '' AS k_tool, if(bitTest(shape, 2), task_id, '') AS k_task
  FROM {db:Identifier}.model_turns
  WHERE {models:Bool} AND created_at >= {from:DateTime64(3, 'UTC')} AND ifNull(cost_usd, 0) != 0
) AS t
INNER JOIN (
  SELECT b.1 AS budget_id, b.2 AS shape, b.3 AS agent, b.4 AS tool, b.5 AS task, b.6 AS start_ms, b.7 AS day, b.8 AS costs
  FROM (SELECT arrayJoin(arrayZip({ids:Array(String)}, {b_shapes:Array(UInt8)}, {agents:Array(String)}, {tools_of:Array(String)}, {tasks:Array(String)}, {starts:Array(Int64)}, {days:Array(Bool)}, {costs:Array(UInt8)})) AS b)
) AS k ON t.shape = k.shape AND t.k_agent = k.agent AND t.k_tool = k.tool AND t.k_task = k.task
WHERE toUnixTimestamp64Milli(t.created_at) >= k.start_ms AND bitTest(k.costs, t.kind)
GROUP BY budget_id, period_key`,
  params: {
    db: 'database of the segments (Identifier)',
    from: "the earliest start of the budgets' current periods, 'YYYY-MM-DD hh:mm:ss.sss' UTC",
    shapes: 'the distinct scope shapes of the budgets (bits: 1 agent_id, 2 tool_id, 4 task_id)',
    tools: 'whether any budget counts tool calls', models: 'whether any budget counts model turns',
    ids: 'budget ids', b_shapes: 'each budget’s scope shape', agents: "each budget's agent_id ('' when not scoped)", tools_of: "each budget's tool_id ('' when not scoped)",
    tasks: "each budget's task_id ('' when not scoped)", starts: "start of each budget's current period, ms since the epoch", days: 'each budget: true for a day period, false for a month',
    costs: 'each budget: the costs it counts (bits: 1 tool calls, 2 model turns)',
    with_seen: 'whether to return the ids of counted records stored recently', seen_ms: 'how recently (by ClickHouse’s clock, ingested_at)',
  },
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

/** Budgets per spend statement: its parameters travel in the request, so a set of thousands is read in a few statements. */
const BUDGETS_PER_STATEMENT = 500;

const shapeOf = (b: Budget): number => (b.scope.agent_id === undefined ? 0 : 1) | (b.scope.tool_id === undefined ? 0 : 2) | (b.scope.task_id === undefined ? 0 : 4);
const costsOf = (b: Budget): number => (countsTools(b.scope) ? 1 : 0) | (countsModels(b.scope) ? 2 : 0);

/**
 * The stored spend of `budgets` in their periods in force at `nowMs` (and later periods calls
 * already fell in); with `seenMs`, also the ids of the counted calls ClickHouse stored within that
 * many ms before the statement (see BudgetLedger.setBudgets). Nothing is read for no budget.
 */
export async function loadBudgetSpend(ch: StatementRunner, db: string, budgets: readonly Budget[], nowMs: number, seenMs: number, ctx: QueryContext): Promise<LoadedSpend> {
  const out: LoadedSpend = { spend: [], seen: [] };
  for (let i = 0; i < budgets.length; i += BUDGETS_PER_STATEMENT) {
    const chunk = budgets.slice(i, i + BUDGETS_PER_STATEMENT);
    const starts = chunk.map((b) => periodStartMs(b.period, nowMs));
    const rows = await runQuery<{ budget_id: string; period_key: string; spent: number; seen: string[] }>(
      ch,
      BUDGET_SPEND,
      {
        db,
        from: chTime(Math.min(...starts)),
        shapes: [...new Set(chunk.map(shapeOf))],
        ids: chunk.map((b) => b.budget_id),
        b_shapes: chunk.map(shapeOf),
        agents: chunk.map((b) => b.scope.agent_id ?? ''),
        tools: chunk.some((b) => costsOf(b) & 1),
        models: chunk.some((b) => costsOf(b) & 2),
        tools_of: chunk.map((b) => b.scope.tool_id ?? ''),
        tasks: chunk.map((b) => b.scope.task_id ?? ''),
        starts,
        days: chunk.map((b) => b.period === 'day'),
        costs: chunk.map(costsOf),
        with_seen: seenMs > 0,
        seen_ms: Math.max(0, Math.round(seenMs)),
      },
      ctx,
    );
    for (const r of rows) {
      out.spend.push({ budget_id: r.budget_id, period_key: r.period_key, spent: Number(r.spent) });
      for (const id of r.seen) out.seen.push(id);
    }
  }
  return out;
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
  const budgets = set?.budgets ?? [];
  const ledger = new BudgetLedger(0);
  ledger.setBudgets(budgets, await loadBudgetSpend(ch, db, budgets, nowMs, 0, ctx), nowMs);
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
