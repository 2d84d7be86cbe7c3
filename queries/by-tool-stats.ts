/**
 * ByToolId stats (SPEC §5, GET /v1/tools/{tool_id}/stats): volume, success rate, latency and
 * cost of one tool over a window, and its error messages. `tool_id = … AND created_at …` is a
 * key range of the table's `by_tool` projection (ORDER BY tool_id, created_at).
 */
import type { ToolStats } from '../schemas/answers.ts';
import { countsObject, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

/**
 * Aggregates of one tool and its error messages in one scan: GROUPING SETS gives the row of the
 * whole tool (whole = 1) and one row per error message (most frequent first, at most `limit`).
 */
export const TOOL_STATS: QuerySpec = {
  name: 'tool_stats',
  description:
    'One tool: invocations, successes, average and p95 duration (linear interpolation) and total cost (row whole = 1), then its error messages with their counts (k, n), most frequent first.',
  sql: `SELECT grouping(error) AS whole, error AS k, count() AS n, countIf(status = 'success') AS successes,
  avg(duration_ms) AS avg_duration_ms, quantileExactInclusive(0.95)(duration_ms) AS p95_duration_ms,
  sum(ifNull(cost_usd, 0)) AS total_cost_usd
FROM {db:Identifier}.tool_invocations
WHERE tool_id = {tool_id:String}
  AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
GROUP BY GROUPING SETS ((), (error))
HAVING whole = 1 OR k IS NOT NULL
ORDER BY whole DESC, n DESC, k
LIMIT {limit:UInt32}`,
  params: { ...WINDOW_PARAM_DOCS, tool_id: 'the tool', limit: 'one more than the error messages to return' },
};

/** Parameters of {@link byToolStats}. */
export interface ByToolStatsParams {
  toolId: string;
  window: TimeWindow;
  /** Error messages to return at most. */
  limit: number;
}

interface StatsRow {
  whole: number;
  k: string | null;
  n: number;
  successes: number;
  avg_duration_ms: number | null;
  p95_duration_ms: number | null;
  total_cost_usd: number;
}

/** Runs the per-tool statistics. */
export async function byToolStats(ch: StatementRunner, db: string, p: ByToolStatsParams, ctx: QueryContext): Promise<ToolStats> {
  const rows = await runQuery<StatsRow>(ch, TOOL_STATS, { db, tool_id: p.toolId, ...windowParams(p.window), limit: p.limit + 1 }, ctx);
  const stats = rows.find((r) => Number(r.whole) === 1);
  const n = Number(stats?.n ?? 0);
  const errors = rows.filter((r) => Number(r.whole) !== 1 && r.k !== null).map((r) => ({ k: r.k as string, n: r.n }));
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
