/**
 * Every tool at a glance (GET /v1/tools, `tool-audit top`): per tool the figures of ByToolId
 * stats — calls, success rate, average and p95 duration, total cost — busiest first, and the
 * MCP server each tool came from (the current manifest's `mcp.server`; '' for other tools).
 */
import { CREATED_IN_WINDOW } from './dashboard-common.ts';
import type { ToolsSummary } from './schemas.ts';
import { EDGE_CALLS, HOURS_OUTSIDE_DAYS, WHOLE_DAYS, WINDOW_BOUNDS } from './window-aggregates.ts';
import { runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

/**
 * Per-tool aggregates from `tool_days` / `tool_hours` for the window's whole days and hours and
 * the calls of its edges (queries/window-aggregates.ts). The p95 is quantileExactInclusive's,
 * exactly: the merged per-bucket counts give the duration_bucket holding ranks k and k + 1
 * (h = 0.95 (n − 1) + 1, k = ⌊h⌋), and only those buckets' durations are read from the calls
 * (`by_tool_duration`: tool, bucket, created_at), then interpolated as ClickHouse does.
 */
export const TOOLS_SUMMARY: QuerySpec = {
  name: 'tools_summary',
  description: 'Per tool: invocations, successes, average and p95 duration (linear interpolation), total cost; most invoked first.',
  sql: `WITH ${WINDOW_BOUNDS},
  totals AS (
    SELECT tool_id, sum(n) AS invocations, sum(ok) AS successes, sum(dsum) AS duration_sum, sum(cost) AS total_cost_usd,
      sumMap(hist) AS counts, 0.95 * (invocations - 1) + 1 AS h, toUInt64(h) AS k,
      arrayCumSum(mapValues(counts)) AS cum, arrayFirstIndex(c -> c >= k, cum) AS i,
      mapKeys(counts)[i] AS b1, if(k < invocations, mapKeys(counts)[arrayFirstIndex(c -> c > k, cum)], b1) AS b2,
      cum[i] - mapValues(counts)[i] AS below
    FROM (
      SELECT tool_id, calls AS n, successes AS ok, duration_ms_sum AS dsum, cost_usd AS cost, buckets AS hist
      FROM {db:Identifier}.tool_days
      WHERE ${WHOLE_DAYS}
      UNION ALL
      SELECT tool_id, calls, successes, duration_ms_sum, cost_usd, buckets
      FROM {db:Identifier}.tool_hours
      WHERE ${HOURS_OUTSIDE_DAYS}
      UNION ALL
      SELECT tool_id, count(), countIf(status = 'success'), sum(duration_ms), sum(ifNull(cost_usd, 0)), sumMap(map(duration_bucket, toUInt64(1)))
      FROM {db:Identifier}.tool_invocations
      WHERE ${EDGE_CALLS}
      GROUP BY tool_id
    )
    GROUP BY tool_id
    ORDER BY invocations DESC, tool_id
    LIMIT {limit:UInt32}
  )
SELECT tool_id, invocations, successes, duration_sum / invocations AS avg_duration_ms,
  -- ds: the sorted durations of buckets b1 and b2, the calls of ranks below + 1 onwards
  toFloat64(ds[k - below]) + if(k < invocations, (h - k) * toFloat64(ds[k + 1 - below] - ds[k - below]), 0) AS p95_duration_ms,
  total_cost_usd
FROM totals
LEFT JOIN (
  SELECT tool_id, arraySort(groupArray(duration_ms)) AS ds
  FROM {db:Identifier}.tool_invocations
  WHERE ${CREATED_IN_WINDOW} AND (tool_id, duration_bucket) IN (SELECT tool_id, arrayJoin([b1, b2]) FROM totals)
  GROUP BY tool_id
) AS d USING tool_id
ORDER BY invocations DESC, tool_id`,
  params: { ...WINDOW_PARAM_DOCS, limit: 'tools to return at most' },
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

interface Row {
  tool_id: string;
  invocations: number;
  successes: number;
  avg_duration_ms: number;
  p95_duration_ms: number;
  total_cost_usd: number;
}

/** Runs the per-tool summary. */
export async function toolsSummary(ch: StatementRunner, db: string, p: ToolsSummaryParams, ctx: QueryContext): Promise<ToolsSummary> {
  const rows = await runQuery<Row>(ch, TOOLS_SUMMARY, { db, ...windowParams(p.window), limit: p.limit }, ctx);
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
      p95_duration_ms: Number(r.p95_duration_ms),
      total_cost_usd: Number(r.total_cost_usd),
    })),
  };
}
