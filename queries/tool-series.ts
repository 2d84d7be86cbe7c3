/**
 * Calls and cost per tool over time (GET /v1/tools/series): the web app's sparklines. The same
 * buckets as the Overview dashboard's series (`toStartOfInterval` of created_at), calls and cost
 * in one scan; only buckets with calls are returned (a client fills the gaps with zeros).
 */
import { bucketOf, CREATED_IN_WINDOW, PARAM_DOCS } from './dashboard-common.ts';
import type { ToolSeries } from '../schemas/answers.ts';
import { WHOLE_HOURS, WINDOW_BOUNDS } from './window-aggregates.ts';
import { isoTime, runQuery, windowParams, type QueryContext, type QuerySpec, type StatementRunner, type TimeWindow } from './sql.ts';

/**
 * Calls and cost per (tool, bucket). A bucket of whole hours (bucket_s a multiple of 3600: every
 * bucket is a union of hours) sums `tool_hours` for the window's whole hours and the calls of its
 * edges; other buckets are counted from the calls, as before.
 */
export const TOOL_SERIES: QuerySpec = {
  name: 'tool_series',
  description: 'Per tool and time bucket with calls: calls and cost (null cost as 0); tool_id, then time.',
  sql: `WITH ${WINDOW_BOUNDS}, {bucket_s:UInt32} % 3600 = 0 AS whole_hours
SELECT tool_id, toUnixTimestamp64Milli(toDateTime64(${bucketOf('t')}, 3, 'UTC')) AS time_ms, sum(n) AS calls, sum(cost) AS cost_usd
FROM (
  SELECT toString(tool_id) AS tool_id, hour AS t, calls AS n, cost_usd AS cost
  FROM {db:Identifier}.tool_hours
  WHERE whole_hours AND ${WHOLE_HOURS}
  UNION ALL
  SELECT toString(tool_id), ${bucketOf('created_at')} AS b, count(), sum(ifNull(cost_usd, 0))
  FROM {db:Identifier}.tool_invocations
  WHERE ${CREATED_IN_WINDOW} AND (NOT whole_hours OR created_at < h_lo OR created_at >= h_hi)
  GROUP BY tool_id, b
)
GROUP BY tool_id, time_ms
ORDER BY tool_id, time_ms`,
  params: { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, bucket_s: PARAM_DOCS.bucket_s },
};

/** Parameters of {@link toolSeries}. */
export interface ToolSeriesParams {
  window: TimeWindow;
  bucketS: number;
}

interface Row {
  tool_id: string;
  time_ms: number;
  calls: number;
  cost_usd: number;
}

/** Runs the per-tool series. */
export async function toolSeries(ch: StatementRunner, db: string, p: ToolSeriesParams, ctx: QueryContext): Promise<ToolSeries> {
  const rows = await runQuery<Row>(ch, TOOL_SERIES, { db, ...windowParams(p.window), bucket_s: p.bucketS }, ctx);
  const series: ToolSeries['series'] = [];
  for (const r of rows) {
    let s = series.at(-1);
    if (!s || s.tool_id !== r.tool_id) series.push((s = { tool_id: r.tool_id, points: [] }));
    s.points.push({ time: isoTime(r.time_ms), calls: Number(r.calls), cost_usd: Number(r.cost_usd) });
  }
  return { bucket_s: p.bucketS, series };
}
