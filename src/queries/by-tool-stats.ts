/**
 * ByToolId stats (SPEC §5, GET /v1/tools/{tool_id}/stats): volume, success rate, latency and
 * cost of one tool over a window, and its error messages. `tool_id = … AND created_at …` is a
 * key range of the table's `by_tool` projection (ORDER BY tool_id, created_at).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { ToolStats } from './schemas.ts';
import { countsObject, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow } from './sql.ts';

/** Aggregates of one tool. */
export const TOOL_STATS: QuerySpec = {
  name: 'tool_stats',
  description: 'Invocations, success rate, average and p95 duration (linear interpolation) and total cost of one tool.',
  sql: `SELECT
  count() AS invocations,
  countIf(status = 'success') AS successes,
  avg(duration_ms) AS avg_duration_ms,
  quantileExactInclusive(0.95)(duration_ms) AS p95_duration_ms,
  sum(ifNull(cost_usd, 0)) AS total_cost_usd
FROM {db:Identifier}.tool_invocations
WHERE tool_id = {tool_id:String}
  AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}`,
  params: { ...WINDOW_PARAM_DOCS, tool_id: 'the tool' },
};

/** Error messages of one tool, most frequent first. */
export const TOOL_ERRORS: QuerySpec = {
  name: 'tool_errors',
  description: "Error messages of one tool's calls with their counts, most frequent first.",
  sql: `SELECT assumeNotNull(error) AS k, count() AS n
FROM {db:Identifier}.tool_invocations
WHERE tool_id = {tool_id:String}
  AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND error IS NOT NULL
GROUP BY k
ORDER BY n DESC, k
LIMIT {limit:UInt32}`,
  params: { ...WINDOW_PARAM_DOCS, tool_id: 'the tool', limit: 'most frequent messages to return' },
};

/** Parameters of {@link byToolStats}. */
export interface ByToolStatsParams {
  toolId: string;
  window: TimeWindow;
  /** Error messages to return at most. */
  limit: number;
}

interface StatsRow {
  invocations: number;
  successes: number;
  avg_duration_ms: number | null;
  p95_duration_ms: number | null;
  total_cost_usd: number;
}

/** Runs the per-tool statistics. */
export async function byToolStats(ch: ClickHouseClient, db: string, p: ByToolStatsParams, ctx: QueryContext): Promise<ToolStats> {
  const params = { db, tool_id: p.toolId, ...windowParams(p.window) };
  const [stats] = await runQuery<StatsRow>(ch, TOOL_STATS, params, ctx);
  const n = Number(stats?.invocations ?? 0);
  const errors = n === 0 ? [] : await runQuery<{ k: string; n: number }>(ch, TOOL_ERRORS, { ...params, limit: p.limit }, ctx);
  return {
    tool_id: p.toolId,
    invocations: n,
    success_rate: n === 0 ? null : Number(stats?.successes) / n,
    avg_duration_ms: n === 0 ? null : Number(stats?.avg_duration_ms),
    p95_duration_ms: n === 0 ? null : Number(stats?.p95_duration_ms),
    total_cost_usd: Number(stats?.total_cost_usd ?? 0),
    error_distribution: countsObject(errors),
  };
}
