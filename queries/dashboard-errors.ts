/**
 * Error panels beyond the API's Failed view (queries/failed.ts): failures over time by status
 * and failure rates per tool. A failure is a call whose status is not 'success'.
 */
import { bucketOf, CREATED_IN_WINDOW, PARAM_DOCS, TOOL_FILTER } from './dashboard-common.ts';
import type { QuerySpec } from './sql.ts';

const FROM = `FROM {db:Identifier}.tool_invocations
WHERE ${CREATED_IN_WINDOW}
  AND ${TOOL_FILTER}`;

/** Failures per status and time bucket (one column per failing status, zeros included). */
export const FAILURES_OVER_TIME: QuerySpec = {
  name: 'failures_over_time',
  description: 'Failed calls in each time bucket, one column per failing status (wide format: time, timeout, error, rate_limited, invalid_input).',
  sql: `SELECT ${bucketOf('created_at')} AS time,
  countIf(status = 'timeout') AS timeout,
  countIf(status = 'error') AS error,
  countIf(status = 'rate_limited') AS rate_limited,
  countIf(status = 'invalid_input') AS invalid_input
${FROM}
GROUP BY time
ORDER BY time`,
  params: { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, tool_id: PARAM_DOCS.tool_id, bucket_s: PARAM_DOCS.bucket_s },
};

/** Failure counts and rate per tool. */
export const FAILURES_BY_TOOL: QuerySpec = {
  name: 'failures_by_tool',
  description: 'Per tool: calls, failures, failure rate, failures per status and the most frequent error message, most failures first.',
  sql: `SELECT
  toString(tool_id) AS tool_id,
  count() AS calls,
  countIf(status != 'success') AS failures,
  failures / calls AS failure_rate,
  countIf(status = 'timeout') AS timeouts,
  countIf(status = 'error') AS errors,
  countIf(status = 'rate_limited') AS rate_limited,
  countIf(status = 'invalid_input') AS invalid_input,
  arrayElement(topKIf(1)(assumeNotNull(error), error IS NOT NULL), 1) AS top_error
${FROM}
GROUP BY tool_id
ORDER BY failures DESC, failure_rate DESC, tool_id
LIMIT {limit:UInt32}`,
  params: { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, tool_id: PARAM_DOCS.tool_id, limit: PARAM_DOCS.limit },
};
