/**
 * Expensive calls (SPEC §5, GET /v1/calls/expensive?threshold_usd=1): calls costing more than a
 * threshold, most expensive first, with their count and total cost over the window.
 */
import { z } from 'zod';
import { cursorCodec, numKey, uuidKey } from './cursor.ts';
import { INVOCATION_COLUMNS, toInvocation, type InvocationReadRow } from './rows.ts';
import type { Expensive } from '../schemas/answers.ts';
import { pageOf, PAGE_PARAM_DOCS, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

/** One page of the calls above the threshold. */
export const EXPENSIVE_CALLS: QuerySpec = {
  name: 'expensive_calls',
  description: 'Calls with cost_usd > threshold_usd, by cost descending (then call_id descending).',
  sql: `SELECT ${INVOCATION_COLUMNS}
FROM {db:Identifier}.tool_invocations
WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND cost_usd > {threshold_usd:Float64}
  AND (NOT {has_cursor:Bool} OR (assumeNotNull(cost_usd), call_id) < ({c_cost:Float64}, {c_id:UUID}))
ORDER BY cost_usd DESC, call_id DESC
LIMIT {limit:UInt32}`,
  params: {
    ...WINDOW_PARAM_DOCS,
    ...PAGE_PARAM_DOCS,
    threshold_usd: 'calls costing strictly more than this',
    c_cost: 'cost_usd of the last row of the previous page',
    c_id: 'call_id of the last row of the previous page',
  },
};

/** Count and total cost of the calls above the threshold. */
export const EXPENSIVE_TOTALS: QuerySpec = {
  name: 'expensive_totals',
  description: 'Number and total cost of the calls with cost_usd > threshold_usd.',
  sql: `SELECT count() AS count, sum(assumeNotNull(cost_usd)) AS total_cost_usd
FROM {db:Identifier}.tool_invocations
WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND cost_usd > {threshold_usd:Float64}`,
  params: { ...WINDOW_PARAM_DOCS, threshold_usd: 'calls costing strictly more than this' },
};

const cursor = cursorCodec('expensive', z.tuple([numKey, uuidKey]));

/** Parameters of {@link expensiveCalls}. */
export interface ExpensiveParams {
  thresholdUsd: number;
  window: TimeWindow;
  limit: number;
  cursor?: string;
}

/** Runs the expensive-calls list. */
export async function expensiveCalls(ch: StatementRunner, db: string, p: ExpensiveParams, ctx: QueryContext): Promise<Expensive> {
  const after = p.cursor === undefined ? undefined : cursor.decode(p.cursor);
  const base = { db, threshold_usd: p.thresholdUsd, ...windowParams(p.window) };
  const [totals] = await runQuery<{ count: number; total_cost_usd: number }>(ch, EXPENSIVE_TOTALS, base, ctx);
  const count = Number(totals?.count ?? 0);
  const rows =
    count === 0
      ? []
      : await runQuery<InvocationReadRow>(
          ch,
          EXPENSIVE_CALLS,
          { ...base, has_cursor: after !== undefined, c_cost: after?.[0] ?? 0, c_id: after?.[1] ?? '00000000-0000-0000-0000-000000000000', limit: p.limit + 1 },
          ctx,
        );
  const page = pageOf(rows, p.limit);
  const last = page.rows[page.rows.length - 1];
  return {
    threshold_usd: p.thresholdUsd,
    invocations: page.rows.map((r) => toInvocation(r, ctx.expensiveThresholdUsd)),
    count,
    total_cost_usd: Number(totals?.total_cost_usd ?? 0),
    next_cursor: page.more && last ? cursor.encode([Number(last.cost_usd), last.call_id]) : null,
  };
}
