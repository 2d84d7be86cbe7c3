/**
 * Every tool at a glance (GET /v1/tools, `tool-audit top`): per tool the figures of ByToolId
 * stats — calls, success rate, average and p95 duration, total cost — busiest first, and the
 * MCP server each tool came from (the current manifest's `mcp.server`; '' for other tools).
 */
import type { ToolsSummary } from '../schemas/answers.ts';
import { toolWindowRows, WINDOW_BOUNDS } from './window-aggregates.ts';
import { runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

/**
 * Per-tool aggregates from `tool_days` / `tool_hours` for the window's whole days and hours and
 * the calls of its edges (queries/window-aggregates.ts), and where each tool's p95 lies. The p95
 * is quantileExactInclusive's, exactly: with h = 0.95 (n − 1) + 1 and k = ⌊h⌋, the merged
 * per-bucket counts give the duration_buckets b1 ≤ b2 holding ranks k and k + 1, and `rank` is k's
 * position among the calls of those buckets (`below` calls lie in lower ones). TOOL_P95_DURATIONS
 * then reads those buckets' durations alone: a second statement, so these figures are computed
 * once (a CTE read twice, by the durations' key set and by the join, is computed twice).
 */
export const TOOLS_SUMMARY: QuerySpec = {
  name: 'tools_summary',
  description: 'Per tool: invocations, successes, average duration, total cost, and the duration buckets and rank of the p95; most invoked first.',
  sql: `WITH ${WINDOW_BOUNDS}
SELECT tool_id, sum(n) AS invocations, sum(ok) AS successes, sum(dsum) / invocations AS avg_duration_ms, sum(cost) AS total_cost_usd,
  sumMap(hist) AS counts, 0.95 * (invocations - 1) + 1 AS h, toUInt64(h) AS k,
  arrayCumSum(mapValues(counts)) AS cum, arrayFirstIndex(c -> c >= k, cum) AS i,
  mapKeys(counts)[i] AS b1, if(k < invocations, mapKeys(counts)[arrayFirstIndex(c -> c > k, cum)], b1) AS b2,
  k - (cum[i] - mapValues(counts)[i]) AS rank, h - k AS frac, k < invocations AS interpolate
FROM (
  ${toolWindowRows(
    'calls AS n, successes AS ok, duration_ms_sum AS dsum, cost_usd AS cost, buckets AS hist',
    "count(), countIf(status = 'success'), sum(duration_ms), sum(ifNull(cost_usd, 0)), sumMap(map(duration_bucket, toUInt64(1)))",
  )}
)
GROUP BY tool_id
ORDER BY invocations DESC, tool_id
LIMIT {limit:UInt32}`,
  params: { ...WINDOW_PARAM_DOCS, limit: 'tools to return at most' },
};

/**
 * The durations at ranks `rank` and `rank + 1` of each tool's p95 buckets in the window: a key
 * range of `tool_durations` (tool, bucket, created_at) per tool. Its rows start where the stored
 * calls do, as the aggregates' reads do (it keeps them a day longer than the calls).
 */
export const TOOL_P95_DURATIONS: QuerySpec = {
  name: 'tool_p95_durations',
  description: "Per listed tool: the durations at ranks rank and rank + 1 among the window's calls of its buckets b1 and b2 (the p95 of tools_summary).",
  sql: `WITH ${WINDOW_BOUNDS}
SELECT tool_id, ds[{ranks:Array(UInt64)}[indexOf({tool_ids:Array(String)}, tool_id)] AS r] AS d1, ds[r + 1] AS d2
FROM (
  SELECT toString(tool_id) AS tool_id, arraySort(groupArray(duration_ms)) AS ds
  FROM {db:Identifier}.tool_durations
  WHERE created_at >= fromUnixTimestamp64Milli(lo_ms, 'UTC') AND created_at < {to:DateTime64(3, 'UTC')}
    AND (tool_id, duration_bucket) IN (SELECT arrayJoin(arrayConcat(arrayZip({tool_ids:Array(String)}, {b1:Array(UInt8)}), arrayZip({tool_ids:Array(String)}, {b2:Array(UInt8)}))))
  GROUP BY tool_id
)`,
  params: { ...WINDOW_PARAM_DOCS, tool_ids: 'the tools of the summary', b1: 'per tool, its b1', b2: 'per tool, its b2', ranks: 'per tool, its rank' },
};

/** The MCP server of each of the listed tools in the current manifest that came from one. */
export const TOOL_SERVERS: QuerySpec = {
  name: 'tool_servers',
  description: "The mcp.server of the listed tools' entries in the current manifest version (the tool came from that MCP server's tools/list).",
  sql: `SELECT tool_id, JSONExtractString(entry, 'mcp', 'server') AS server
FROM {db:Identifier}.tool_manifests
WHERE version = (SELECT max(version) FROM {db:Identifier}.tool_manifests) AND tool_id IN {tool_ids:Array(String)} AND server != ''`,
  params: { db: 'database of the segments (Identifier)', tool_ids: 'the tools of the summary page (at most its limit)' },
};

/** Parameters of {@link toolsSummary}. */
export interface ToolsSummaryParams {
  window: TimeWindow;
  limit: number;
}

/** A row of TOOLS_SUMMARY. */
export interface Row {
  tool_id: string;
  invocations: string;
  successes: string;
  avg_duration_ms: number;
  total_cost_usd: number;
  b1: number;
  b2: number;
  rank: string;
  frac: number;
  interpolate: number;
}

/** quantileExactInclusive(0.95) from the durations at ranks k and k + 1, as ClickHouse computes it. */
async function p95s(ch: StatementRunner, db: string, p: ToolsSummaryParams, rows: readonly Row[], ctx: QueryContext): Promise<Map<string, number>> {
  const params = { db, ...windowParams(p.window), tool_ids: rows.map((r) => r.tool_id), b1: rows.map((r) => r.b1), b2: rows.map((r) => r.b2), ranks: rows.map((r) => r.rank) };
  const ds = new Map((await runQuery<{ tool_id: string; d1: string; d2: string }>(ch, TOOL_P95_DURATIONS, params, ctx)).map((d) => [d.tool_id, d]));
  return new Map(
    rows.map((r) => {
      const d = ds.get(r.tool_id);
      const [d1, d2] = [Number(d?.d1), Number(d?.d2)];
      return [r.tool_id, Number(r.interpolate) ? d1 + r.frac * (d2 - d1) : d1];
    }),
  );
}

/** The rows of TOOLS_SUMMARY and each tool's p95 (TOOL_P95_DURATIONS): the summary without servers. */
export async function toolFigures(ch: StatementRunner, db: string, p: ToolsSummaryParams, ctx: QueryContext): Promise<{ rows: Row[]; p95: Map<string, number> }> {
  const rows = await runQuery<Row>(ch, TOOLS_SUMMARY, { db, ...windowParams(p.window), limit: p.limit }, ctx);
  return { rows, p95: rows.length ? await p95s(ch, db, p, rows, ctx) : new Map<string, number>() };
}

/** Runs the per-tool summary. */
export async function toolsSummary(ch: StatementRunner, db: string, p: ToolsSummaryParams, ctx: QueryContext): Promise<ToolsSummary> {
  const { rows, p95 } = await toolFigures(ch, db, p, ctx);
  // Joined here rather than in SQL: only the page's tools' entries are read, and the summary's statement stays as it was.
  const ids = rows.map((r) => r.tool_id);
  const servers = ids.length ? new Map((await runQuery<{ tool_id: string; server: string }>(ch, TOOL_SERVERS, { db, tool_ids: ids }, ctx)).map((r) => [r.tool_id, r.server])) : new Map<string, string>();
  return {
    tools: rows.map((r) => ({
      tool_id: r.tool_id,
      server: servers.get(r.tool_id) ?? '',
      invocations: Number(r.invocations),
      success_rate: Number(r.successes) / Number(r.invocations),
      avg_duration_ms: Number(r.avg_duration_ms),
      p95_duration_ms: p95.get(r.tool_id) ?? NaN,
      total_cost_usd: Number(r.total_cost_usd),
    })),
  };
}
