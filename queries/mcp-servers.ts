/**
 * MCP servers and their tools (GET /v1/mcp/servers) from the definition history the
 * `tool-audit mcp` gateway's reports left in `mcp_tool_definitions` (one row per change).
 */
import { z } from 'zod';
import { iso } from './schemas.ts';
import { isoTime, runQuery, type QueryContext, type QuerySpec, type StatementRunner } from './sql.ts';

/** Most (server, tool) pairs one answer carries; `truncated` says when there were more. */
const MAX_MCP_SERVER_TOOLS = 10_000;

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

const toolSchema = z.strictObject({
  tool_id: z.string().describe('server/tool'),
  tool: z.string().describe("the tool's name on its server"),
  definition_hash: z.string().describe('of its latest definition'),
  first_seen: iso.describe('seen_at of the report that first listed it'),
  last_changed: iso.describe('seen_at of its latest change (added, changed or removed)'),
  versions: z.number().int().describe('definitions seen (1 + changes, counting re-adds)'),
  removed: z.boolean().describe('the latest report no longer lists it'),
});

/** GET /v1/mcp/servers. */
export const mcpServersSchema = z.strictObject({
  servers: z.array(
    z.strictObject({
      server: z.string(),
      tools: z.array(toolSchema),
      definition_changes: z.number().int().describe('tool_definition_changed findings of the server'),
      last_seen: iso.describe('seen_at of the latest report that changed something (an unchanged report writes nothing)'),
    }),
  ),
  truncated: z.boolean().describe(`more than ${MAX_MCP_SERVER_TOOLS} (server, tool) pairs: the rest is left out`),
});
export type McpServers = z.infer<typeof mcpServersSchema>;

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
