/**
 * Every tool at a glance (GET /v1/tools, `tool-audit top`): per tool the figures of ByToolId
 * stats — calls, success rate, average and p95 duration, total cost — busiest first, and the
 * MCP server each tool came from (the current manifest's `mcp.server`; '' for other tools).
 */
import type { ToolsSummary } from './schemas.ts';
import { runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

/** Per-tool aggregates. */
export const TOOLS_SUMMARY: QuerySpec = {
  name: 'tools_summary',
  description: 'Per tool: invocations, successes, average and p95 duration (linear interpolation), total cost; most invoked first.',
  sql: `SELECT tool_id, count() AS invocations, countIf(status = 'success') AS successes,
  avg(duration_ms) AS avg_duration_ms, quantileExactInclusive(0.95)(duration_ms) AS p95_duration_ms,
  sum(ifNull(cost_usd, 0)) AS total_cost_usd
FROM {db:Identifier}.tool_invocations
WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
GROUP BY tool_id
ORDER BY invocations DESC, tool_id
LIMIT {limit:UInt32}`,
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
