/**
 * One MCP server's part of the tool manifest (the entries tagged `mcp.server`): built from a
 * tools/list, compared with the part in force, merged into the next version, and the findings
 * and history rows of what changed. Pure; mcp-store.ts does the I/O.
 */
import { canonicalArgs, type JsonValue } from '../schemas/canonical-json.ts';
import { changedFields, definitionHash, mcpEntry, mcpToolId, type DefinitionField, type McpTool } from '../schemas/mcp-tools.ts';
import { schemaChecker } from '../schemas/json-schema-check.ts';
import type { Manifest, ManifestEntry } from '../schemas/tool-manifest.ts';
import type { Violation } from './audit-rules.ts';

/** A server's entries built from its tools/list. */
export interface ServerPart {
  entries: Manifest;
  /** tool_id → the MCP tool as listed (the history keeps it). */
  tools: Map<string, McpTool>;
  warnings: string[];
}

/**
 * The entries of `server`'s tools. A schema whose tool is unchanged since `current` keeps the
 * verdict it had (Ajv compiles a schema in milliseconds; a list of thousands re-sent unchanged
 * should cost nothing).
 */
export function buildServerPart(server: string, tools: readonly McpTool[], current: Manifest, check: (schema: unknown) => string[] = schemaChecker()): ServerPart {
  const entries: Manifest = {};
  const byId = new Map<string, McpTool>();
  const warnings: string[] = [];
  for (const t of tools) {
    const id = mcpToolId(server, t.name);
    const before = current[id];
    const known = before?.mcp?.server === server && before.mcp.definition_hash === definitionHash(t) ? before : undefined;
    // Unchanged and accepted before: accepted now (refused ones are compiled again for the warning).
    const problems = (s: unknown) => (known && (s === t.inputSchema ? known.input_schema : known.output_schema) !== null ? [] : check(s));
    const built = mcpEntry(server, t, problems);
    if (before && before.mcp?.server !== server) built.warnings.push(`${id}: replaces an entry not from this server (${before.mcp ? `MCP server ${before.mcp.server}` : 'declared by hand'})`);
    entries[id] = built.entry;
    byId.set(id, t);
    warnings.push(...built.warnings);
  }
  return { entries, tools: byId, warnings };
}

/** The entries of `current` that belong to `server`. */
export function serverPartOf(current: Manifest, server: string): Manifest {
  return Object.fromEntries(Object.entries(current).filter(([, e]) => e.mcp?.server === server));
}

/** One tool whose definition hash changed. */
export interface DefinitionChange {
  tool_id: string;
  old_hash: string;
  new_hash: string;
}

/** How a server's new part differs from the one in force. */
export interface PartDiff {
  added: string[];
  removed: string[];
  changed: DefinitionChange[];
  /** Whether the new part differs at all (hashes or derived entries): a new version is due. */
  differs: boolean;
}

const hashOf = (e: ManifestEntry | undefined): string => e?.mcp?.definition_hash ?? '';
const same = (a: ManifestEntry, b: ManifestEntry) => canonicalArgs(a as unknown as JsonValue) === canonicalArgs(b as unknown as JsonValue);

/** Compares `server`'s part in force (`old`) with the one built from its latest tools/list. */
export function diffServerPart(old: Manifest, next: Manifest): PartDiff {
  const added = Object.keys(next).filter((id) => !old[id]).sort();
  const removed = Object.keys(old).filter((id) => !next[id]).sort();
  const changed: DefinitionChange[] = [];
  let differs = added.length > 0 || removed.length > 0;
  for (const [id, e] of Object.entries(next)) {
    const before = old[id];
    if (!before) continue;
    if (hashOf(before) !== hashOf(e)) changed.push({ tool_id: id, old_hash: hashOf(before), new_hash: hashOf(e) });
    else if (!same(before, e)) differs = true;
  }
  changed.sort((a, b) => (a.tool_id < b.tool_id ? -1 : a.tool_id > b.tool_id ? 1 : 0));
  return { added, removed, changed, differs: differs || changed.length > 0 };
}

/** The next manifest: `current` without `server`'s entries, plus its new ones. */
export function mergeServerPart(current: Manifest, server: string, next: Manifest): Manifest {
  const out: Manifest = {};
  for (const [id, e] of Object.entries(current)) if (e.mcp?.server !== server) out[id] = e;
  return { ...out, ...next };
}

/**
 * The MCP tool a manifest entry stands for, when its listed definition is not at hand (a tool
 * tagged by hand, or history lost): what the entry keeps of it.
 */
export function toolOfEntry(e: ManifestEntry): McpTool {
  const annotations = (e.mcp?.annotations ?? undefined) as McpTool['annotations'];
  return {
    name: e.mcp?.tool ?? e.tool_id,
    ...(e.name !== (e.mcp?.tool ?? e.tool_id) && e.name !== annotations?.title ? { title: e.name } : {}),
    ...(e.description === '' ? {} : { description: e.description }),
    inputSchema: typeof e.input_schema === 'object' && e.input_schema !== null ? e.input_schema : {},
    ...(typeof e.output_schema === 'object' && e.output_schema !== null ? { outputSchema: e.output_schema } : {}),
    ...(annotations ? { annotations } : {}),
  };
}

/** A changed tool with the fields that changed. */
export interface ChangedTool extends DefinitionChange {
  fields: DefinitionField[];
}

/** The fields of each change, `previous` being the definitions last recorded (tool_id → tool). */
export function describeChanges(changes: readonly DefinitionChange[], old: Manifest, previous: ReadonlyMap<string, McpTool>, next: ReadonlyMap<string, McpTool>): ChangedTool[] {
  return changes.map((c) => {
    const before = previous.get(c.tool_id) ?? toolOfEntry(old[c.tool_id] as ManifestEntry);
    const after = next.get(c.tool_id) as McpTool;
    return { ...c, fields: changedFields(before, after) };
  });
}

/** `tool_definition_changed` findings: one per (tool_id, old hash → new hash). */
export function definitionFindings(server: string, changes: readonly ChangedTool[]): Violation[] {
  return changes.map((c) => ({
    violation_key: `MCP/tool_definition_changed/${c.tool_id}/${c.old_hash}..${c.new_hash}`,
    invariant: 'MCP',
    packet_type: 'mcp_tools',
    ids: [c.tool_id],
    detail: JSON.stringify({ server, tool: c.tool_id.slice(server.length + 1), tool_id: c.tool_id, fields: c.fields, old_hash: c.old_hash, new_hash: c.new_hash }),
  }));
}
