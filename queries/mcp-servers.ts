/**
 * MCP servers and their tools (GET /v1/mcp/servers) from the definition history the
 * `tool-audit mcp` gateway's reports left in `mcp_tool_definitions` (one row per change).
 */
import { MAX_MCP_SERVER_TOOLS, type McpServers } from '../schemas/answers.ts';
import { isoTime, runQuery, type QueryContext, type QuerySpec, type StatementRunner } from './sql.ts';

/** Most (server, tool) pairs one answer carries; `truncated` says when there were more. */

/** Per (server, tool): its latest definition, when first seen and last changed, how many definitions. */
export const MCP_SERVER_TOOLS: QuerySpec = {
  name: 'mcp_server_tools',
  description: 'Per MCP server and tool: latest definition hash, first seen, last change, definitions seen, definition changes, removed or not (from mcp_tool_definitions).',
  sql: `SELECT server, tool_id, argMax(tool, version) AS tool, argMax(definition_hash, version) AS definition_hash,
  toUnixTimestamp64Milli(min(seen_at)) AS first_ms, toUnixTimestamp64Milli(max(seen_at)) AS last_ms,
  countIf(change != 'removed') AS versions, countIf(change = 'changed') AS changes,
  argMax(toString(change), version) = 'removed' AS removed
FROM {db:Identifier}.mcp_tool_definitions
GROUP BY server, tool_id
ORDER BY server, tool_id
LIMIT {limit:UInt32}`,
  params: { db: 'database of the segments (Identifier)', limit: '(server, tool) pairs to return at most (one more than answered, to tell truncation)' },
};


interface Row {
  server: string;
  tool_id: string;
  tool: string;
  definition_hash: string;
  first_ms: number | string;
  last_ms: number | string;
  versions: number | string;
  changes: number | string;
  removed: number | boolean;
}

/** Every MCP server the gateway reported, with its tools, servers and tools in name order. */
export async function mcpServers(ch: StatementRunner, db: string, ctx: QueryContext, max: number = MAX_MCP_SERVER_TOOLS): Promise<McpServers> {
  const rows = await runQuery<Row>(ch, MCP_SERVER_TOOLS, { db, limit: max + 1 }, ctx);
  const servers = new Map<string, McpServers['servers'][number]>();
  for (const r of rows.slice(0, max)) {
    let s = servers.get(r.server);
    if (!s) servers.set(r.server, (s = { server: r.server, tools: [], definition_changes: 0, last_seen: isoTime(r.last_ms) }));
    s.tools.push({
      tool_id: r.tool_id,
      tool: r.tool,
      definition_hash: r.definition_hash,
      first_seen: isoTime(r.first_ms),
      last_changed: isoTime(r.last_ms),
      versions: Number(r.versions),
      removed: Boolean(Number(r.removed)),
    });
    s.definition_changes += Number(r.changes);
    if (Number(r.last_ms) > Date.parse(s.last_seen)) s.last_seen = isoTime(r.last_ms);
  }
  return { servers: [...servers.values()], truncated: rows.length > max };
}
