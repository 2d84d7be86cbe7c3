/**
 * Applying an MCP server's tools/list (POST /v1/mcp/tools): the server's part of the manifest
 * replaced, as the next version, only when it differs from the part in force; each definition
 * change recorded once as a `tool_definition_changed` violation; each added, changed or removed
 * tool one row of `mcp_tool_definitions`. Runs in the queue of every manifest apply of the
 * process (manifest-store.ts), so the manifest it starts from is the one it replaces.
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { chTime } from '../platform/clickhouse/statement.ts';
import type { McpTool, McpToolsAnswer, McpToolsBody } from '../schemas/mcp-tools.ts';
import type { Manifest, ManifestEntry } from '../schemas/tool-manifest.ts';
import type { Violation } from './audit-rules.ts';
import { unrecorded } from './auditor.ts';
import { claimVersion } from './manifest-claims.ts';
import { loadCurrentManifest, nextEffectiveMs, serializedApply, writeManifestVersion } from './manifest-store.ts';
import { buildServerPart, definitionFindings, describeChanges, diffServerPart, mergeServerPart, serverPartOf, toolOfEntry, type ServerPart } from './mcp-manifest.ts';

/** What an MCP apply did (the answer of POST /v1/mcp/tools), and the findings it recorded anew. */
export interface McpApplied {
  answer: McpToolsAnswer;
  recorded: number;
}

/** What a report changes against `current`: the server's part before and after, and the answer without a version. */
function planOf(body: McpToolsBody, current: Manifest) {
  const old = serverPartOf(current, body.server);
  const part = buildServerPart(body.server, body.tools, current);
  const diff = diffServerPart(old, part.entries);
  const answer: McpToolsAnswer = { server: body.server, version: null, added: diff.added, removed: diff.removed, changed: [], warnings: part.warnings };
  return { old, part, diff, answer };
}

/**
 * Applies `body` as `server`'s part of the manifest at `nowMs`. A list equal to the part in force
 * (same definition hashes, same derived entries) writes nothing and answers `version: null`.
 * Otherwise it claims the next version number (manifest-claims.ts) and plans again from the
 * manifest then current: another process may have applied in between.
 */
export function applyMcpTools(door: ClickHouseDoor, body: McpToolsBody, nowMs: number = Date.now(), appliedBy = 'local'): Promise<McpApplied> {
  return serializedApply(door, async () => {
    const first = planOf(body, (await loadCurrentManifest(door, door.database)).current?.manifest ?? {});
    if (!first.diff.differs) return { answer: first.answer, recorded: 0 };
    const version = await claimVersion(door, appliedBy);
    const history = await loadCurrentManifest(door, door.database);
    const current = history.current?.manifest ?? {};
    // The number is claimed: it is written even if the part no longer differs (rare), so nobody waits for it.
    const { old, part, diff, answer } = planOf(body, current);
    const previous = await lastDefinitions(door, body.server, [...diff.changed.map((c) => c.tool_id), ...diff.removed]);
    const changed = describeChanges(diff.changed, old, previous, part.tools);
    const next = { version, effectiveMs: nextEffectiveMs(history, nowMs) };
    // History and findings before the version: a failure in between leaves the part in force
    // unchanged, so the gateway's next report redoes all three (the same keys, nothing twice).
    const changes = [
      ...diff.added.map((id) => ({ id, change: 'added' as const, tool: part.tools.get(id) as McpTool })),
      ...changed.map((c) => ({ id: c.tool_id, change: 'changed' as const, tool: part.tools.get(c.tool_id) as McpTool })),
      ...diff.removed.map((id) => ({ id, change: 'removed' as const, tool: previous.get(id) ?? toolOfEntry(old[id] as ManifestEntry) })),
    ];
    await door.insertRows('mcp_tool_definitions', changes.map((c) => ({ key: `v${next.version}/${c.id}`, row: definitionRow(body, c, old, part, next.version) })));
    const recorded = await recordOnce(door, definitionFindings(body.server, changed));
    await writeManifestVersion(door, mergeServerPart(current, body.server, part.entries), next, appliedBy);
    return { answer: { ...answer, version: next.version, changed: changed.map((c) => ({ tool_id: c.tool_id, fields: c.fields })) }, recorded };
  });
}

function definitionRow(body: McpToolsBody, c: { id: string; change: 'added' | 'changed' | 'removed'; tool: McpTool }, old: Manifest, part: ServerPart, version: number) {
  const entry = c.change === 'removed' ? old[c.id] : part.entries[c.id];
  return {
    server: body.server,
    tool_id: c.id,
    tool: c.tool.name,
    definition_hash: entry?.mcp?.definition_hash ?? '',
    definition: JSON.stringify(c.tool),
    change: c.change,
    version,
    seen_at: chTime(Date.parse(body.seen_at)),
  };
}

/** The last definition recorded of each of `ids` (tool_id → tool): only those, not the server's whole history. */
async function lastDefinitions(door: ClickHouseDoor, server: string, ids: readonly string[]): Promise<Map<string, McpTool>> {
  if (ids.length === 0) return new Map();
  const rows = await door.select<{ tool_id: string; definition: string }>(
    `SELECT tool_id, argMax(definition, version) AS definition FROM {db:Identifier}.mcp_tool_definitions
     WHERE server = {server:String} AND tool_id IN {ids:KeySet(String)} GROUP BY tool_id`,
    { server, ids },
  );
  return new Map(rows.map((r) => [r.tool_id, JSON.parse(r.definition) as McpTool]));
}

/** Inserts the findings whose keys are not in `violations` yet; returns how many. */
async function recordOnce(door: ClickHouseDoor, found: readonly Violation[]): Promise<number> {
  const fresh = await unrecorded(door, found);
  await door.insertRows('violations', fresh.map((v) => ({ key: v.violation_key, row: v })));
  return fresh.length;
}
