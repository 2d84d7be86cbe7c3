/**
 * Overview panels: volume, success rate, latency and cost, over time and per tool. The same
 * definitions as the API's ByToolId stats (success = status 'success', p95 by linear
 * interpolation, cost summed with null as 0); `tool_id` '' means every tool.
 */
import { bucketOf, CREATED_IN_WINDOW, P95_DURATION, PARAM_DOCS, SUCCESS_RATE, TOOL_FILTER } from './dashboard-common.ts';
import type { QuerySpec } from './sql.ts';

const FROM = `FROM {db:Identifier}.tool_invocations
WHERE ${CREATED_IN_WINDOW}
  AND ${TOOL_FILTER}`;
const SERIES_PARAMS = { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, tool_id: PARAM_DOCS.tool_id, bucket_s: PARAM_DOCS.bucket_s };

/** Tools seen in the window, for a tool picker: value '' (every tool) first. */
export const TOOL_CHOICES: QuerySpec = {
  name: 'tool_choices',
  description: "Tools with calls in the window as (value, text) pairs, led by ('', 'All tools').",
  sql: `SELECT value, text FROM (
  SELECT '' AS value, 'All tools' AS text
  UNION ALL
  SELECT DISTINCT toString(tool_id) AS value, toString(tool_id) AS text
  FROM {db:Identifier}.tool_invocations
  WHERE ${CREATED_IN_WINDOW}
)
ORDER BY value != '', value`,
  params: { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to },
};

/** Totals over the window. */
export const OVERVIEW_TOTALS: QuerySpec = {
  name: 'overview_totals',
  description: 'Calls, failed calls, average calls per second, success rate, p95 duration and total cost over the window.',
  sql: `SELECT
  count() AS calls,
  countIf(status != 'success') AS failures,
  count() / greatest(1, dateDiff('second', {from:DateTime64(3, 'UTC')}, {to:DateTime64(3, 'UTC')})) AS calls_per_s,
  if(count() = 0, NULL, ${SUCCESS_RATE}) AS success_rate,
  if(count() = 0, NULL, ${P95_DURATION}) AS p95_duration_ms,
  sum(ifNull(cost_usd, 0)) AS total_cost_usd
${FROM}`,
  params: { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, tool_id: PARAM_DOCS.tool_id },
};

/** One row per tool. */
export const TOOLS_SUMMARY: QuerySpec = {
  name: 'tools_summary',
  description: 'Per tool: calls, failures, success rate, average and p95 duration, total cost and last call, busiest first.',
  sql: `SELECT
  toString(tool_id) AS tool_id,
  count() AS calls,
  countIf(status != 'success') AS failures,
  ${SUCCESS_RATE} AS success_rate,
  avg(duration_ms) AS avg_duration_ms,
  ${P95_DURATION} AS p95_duration_ms,
  sum(ifNull(cost_usd, 0)) AS total_cost_usd,
  max(created_at) AS last_call
${FROM}
GROUP BY tool_id
ORDER BY calls DESC, tool_id
LIMIT {limit:UInt32}`,
  params: { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, tool_id: PARAM_DOCS.tool_id, limit: PARAM_DOCS.limit },
};

/** Calls per second, per tool and time bucket. */
export const CALLS_PER_SECOND_BY_TOOL: QuerySpec = {
  name: 'calls_per_second_by_tool',
  description: 'Calls per second in each time bucket, one series per tool (long format: time, tool_id, value).',
  sql: `SELECT ${bucketOf('created_at')} AS time, toString(tool_id) AS tool_id, count() / {bucket_s:UInt32} AS calls_per_s
${FROM}
GROUP BY time, tool_id
ORDER BY time, tool_id`,
  params: SERIES_PARAMS,
};

/** Success rate per tool and time bucket. */
export const SUCCESS_RATE_BY_TOOL: QuerySpec = {
  name: 'success_rate_by_tool',
  description: "Share of calls with status 'success' in each time bucket, one series per tool.",
  sql: `SELECT ${bucketOf('created_at')} AS time, toString(tool_id) AS tool_id, ${SUCCESS_RATE} AS success_rate
${FROM}
GROUP BY time, tool_id
ORDER BY time, tool_id`,
  params: SERIES_PARAMS,
};

/** p95 duration per tool and time bucket. */
export const P95_DURATION_BY_TOOL: QuerySpec = {
  name: 'p95_duration_by_tool',
  description: 'p95 of duration_ms in each time bucket, one series per tool.',
  sql: `SELECT ${bucketOf('created_at')} AS time, toString(tool_id) AS tool_id, ${P95_DURATION} AS p95_duration_ms
${FROM}
GROUP BY time, tool_id
ORDER BY time, tool_id`,
  params: SERIES_PARAMS,
};

/** Cost per tool and time bucket. */
export const COST_BY_TOOL_OVER_TIME: QuerySpec = {
  name: 'cost_by_tool_over_time',
  description: 'Sum of cost_usd in each time bucket, one series per tool.',
  sql: `SELECT ${bucketOf('created_at')} AS time, toString(tool_id) AS tool_id, sum(ifNull(cost_usd, 0)) AS cost_usd
${FROM}
GROUP BY time, tool_id
ORDER BY time, tool_id`,
  params: SERIES_PARAMS,
};
