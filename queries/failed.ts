/**
 * Failed calls (SPEC §5, GET /v1/calls/failed): failed calls newest first, how failures split by
 * status and by error_category, and the most frequent error messages, over the window; all of
 * them optionally of one error_category only.
 */
import { NEWEST_FIRST_PARAM_DOCS, newestFirstCursor, newestFirstParams, newestFirstSql } from './by-tool-invocations.ts';
import { ERROR_CATEGORY_SQL, toInvocation, type InvocationReadRow } from './rows.ts';
import type { Failed } from '../schemas/answers.ts';
import { countsObject, pageOf, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

/** The failed calls, of `{category:String}` only unless it is ''. */
const FAILED = `status != 'success' AND ({category:String} = '' OR ${ERROR_CATEGORY_SQL} = {category:String})`;
const WINDOW = "created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}";
const CATEGORY_PARAM_DOCS = { category: "only calls of this error_category ('' = every failed call)" };

/** One page of failed calls. */
export const FAILED_CALLS: QuerySpec = {
  name: 'failed_calls',
  description: "Calls with status != 'success' (of one error_category when given), newest first (created_at, then call_id, descending).",
  sql: newestFirstSql(FAILED),
  params: { ...NEWEST_FIRST_PARAM_DOCS, ...CATEGORY_PARAM_DOCS },
};

/** Failed calls per status. */
export const FAILED_BY_STATUS: QuerySpec = {
  name: 'failed_by_status',
  description: 'Failed calls per status (timeout, error, rate_limited, invalid_input), most frequent first.',
  sql: `SELECT toString(status) AS k, count() AS n
FROM {db:Identifier}.tool_invocations
WHERE ${WINDOW} AND ${FAILED}
GROUP BY k
ORDER BY n DESC, k`,
  params: { ...WINDOW_PARAM_DOCS, ...CATEGORY_PARAM_DOCS },
};

/** Failed calls per error_category. */
export const FAILED_BY_CATEGORY: QuerySpec = {
  name: 'failed_by_category',
  description: "Failed calls per error_category ('' when the call reported none), most frequent first.",
  sql: `SELECT ${ERROR_CATEGORY_SQL} AS k, count() AS n
FROM {db:Identifier}.tool_invocations
WHERE ${WINDOW} AND ${FAILED}
GROUP BY k
ORDER BY n DESC, k`,
  params: { ...WINDOW_PARAM_DOCS, ...CATEGORY_PARAM_DOCS },
};

/** Most frequent error messages. */
export const FREQUENT_ERRORS: QuerySpec = {
  name: 'frequent_errors',
  description: 'Error messages of calls with their counts (of failed calls of one error_category when given), most frequent first.',
  sql: `SELECT assumeNotNull(error) AS k, count() AS n
FROM {db:Identifier}.tool_invocations
WHERE ${WINDOW} AND ({category:String} = '' OR ${ERROR_CATEGORY_SQL} = {category:String})
  AND error IS NOT NULL
GROUP BY k
ORDER BY n DESC, k
LIMIT {limit:UInt32}`,
  params: { ...WINDOW_PARAM_DOCS, ...CATEGORY_PARAM_DOCS, limit: 'most frequent messages to return' },
};

/** The key of failed calls that reported no error_category in `category_distribution`. */
export const NO_CATEGORY = '(none)';

const cursor = newestFirstCursor('failed');

/** Error messages in frequent_errors at most (whatever the page size). */
export const FREQUENT_ERRORS_LIMIT = 100;

/** Parameters of {@link failedCalls}. */
export interface FailedParams {
  window: TimeWindow;
  limit: number;
  cursor?: string;
  /** Only failed calls of this error_category. */
  errorCategory?: string;
}

/** Runs the failed-calls view. */
export async function failedCalls(ch: StatementRunner, db: string, p: FailedParams, ctx: QueryContext): Promise<Failed> {
  const base = { db, ...windowParams(p.window), category: p.errorCategory ?? '' };
  const byStatus = await runQuery<{ k: string; n: number }>(ch, FAILED_BY_STATUS, base, ctx);
  const count = byStatus.reduce((s, r) => s + Number(r.n), 0);
  const byCategory = count === 0 ? [] : await runQuery<{ k: string; n: number }>(ch, FAILED_BY_CATEGORY, base, ctx);
  const messages = count === 0 ? [] : await runQuery<{ k: string; n: number }>(ch, FREQUENT_ERRORS, { ...base, limit: FREQUENT_ERRORS_LIMIT }, ctx);
  const rows = count === 0 ? [] : await runQuery<InvocationReadRow>(ch, FAILED_CALLS, { ...base, ...newestFirstParams(cursor, p.cursor), limit: p.limit + 1 }, ctx);
  const page = pageOf(rows, p.limit);
  const last = page.rows[page.rows.length - 1];
  return {
    errors: page.rows.map((r) => toInvocation(r, ctx.expensiveThresholdUsd)),
    count,
    error_distribution: countsObject(byStatus),
    category_distribution: countsObject(byCategory.map((r) => ({ k: r.k === '' ? NO_CATEGORY : r.k, n: r.n }))),
    frequent_errors: countsObject(messages),
    next_cursor: page.more && last ? cursor.encode([Number(last.created_ms), last.call_id]) : null,
  };
}
