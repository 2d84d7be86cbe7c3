/**
 * Failed calls (SPEC §5, GET /v1/calls/failed): failed calls newest first, how failures split by
 * status, and the most frequent error messages, over the window.
 */
import { NEWEST_FIRST_PARAM_DOCS, newestFirstCursor, newestFirstParams, newestFirstSql } from './by-tool-invocations.ts';
import { toInvocation, type InvocationReadRow } from './rows.ts';
import type { Failed } from './schemas.ts';
import { countsObject, pageOf, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

/** One page of failed calls. */
export const FAILED_CALLS: QuerySpec = {
  name: 'failed_calls',
  description: "Calls with status != 'success', newest first (created_at, then call_id, descending).",
  sql: newestFirstSql("status != 'success'"),
  params: NEWEST_FIRST_PARAM_DOCS,
};

/** Failed calls per status. */
export const FAILED_BY_STATUS: QuerySpec = {
  name: 'failed_by_status',
  description: 'Failed calls per status (timeout, error, rate_limited, invalid_input), most frequent first.',
  sql: `SELECT toString(status) AS k, count() AS n
FROM {db:Identifier}.tool_invocations
WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND status != 'success'
GROUP BY k
ORDER BY n DESC, k`,
  params: { ...WINDOW_PARAM_DOCS },
};

/** Most frequent error messages. */
export const FREQUENT_ERRORS: QuerySpec = {
  name: 'frequent_errors',
  description: 'Error messages of calls with their counts, most frequent first.',
  sql: `SELECT assumeNotNull(error) AS k, count() AS n
FROM {db:Identifier}.tool_invocations
WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND error IS NOT NULL
GROUP BY k
ORDER BY n DESC, k
LIMIT {limit:UInt32}`,
  params: { ...WINDOW_PARAM_DOCS, limit: 'most frequent messages to return' },
};

const cursor = newestFirstCursor('failed');

/** Error messages in frequent_errors at most (whatever the page size). */
export const FREQUENT_ERRORS_LIMIT = 100;

/** Parameters of {@link failedCalls}. */
export interface FailedParams {
  window: TimeWindow;
  limit: number;
  cursor?: string;
}

/** Runs the failed-calls view. */
export async function failedCalls(ch: StatementRunner, db: string, p: FailedParams, ctx: QueryContext): Promise<Failed> {
  const base = { db, ...windowParams(p.window) };
  const byStatus = await runQuery<{ k: string; n: number }>(ch, FAILED_BY_STATUS, base, ctx);
  const count = byStatus.reduce((s, r) => s + Number(r.n), 0);
  const messages = count === 0 ? [] : await runQuery<{ k: string; n: number }>(ch, FREQUENT_ERRORS, { ...base, limit: FREQUENT_ERRORS_LIMIT }, ctx);
  const rows = count === 0 ? [] : await runQuery<InvocationReadRow>(ch, FAILED_CALLS, { ...base, ...newestFirstParams(cursor, p.cursor), limit: p.limit + 1 }, ctx);
  const page = pageOf(rows, p.limit);
  const last = page.rows[page.rows.length - 1];
  return {
    errors: page.rows.map((r) => toInvocation(r, ctx.expensiveThresholdUsd)),
    count,
    error_distribution: countsObject(byStatus),
    frequent_errors: countsObject(messages),
    next_cursor: page.more && last ? cursor.encode([Number(last.created_ms), last.call_id]) : null,
  };
}
