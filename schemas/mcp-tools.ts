/**
 * What the `tool-audit mcp` gateway reports after an upstream MCP server answered `tools/list`
 * (POST /v1/mcp/tools), and how one MCP tool becomes a tool-manifest entry: its tool_id, its
 * definition hash and the capability tags its explicit annotations imply. Pure.
 */
import { z } from 'zod';
import { canonicalArgs, type JsonValue } from './canonical-json.ts';
import { sha256Hex } from './hashing.ts';
import { schemaProblems } from './json-schema-check.ts';
import { manifestEntrySchema, type ManifestEntry } from './tool-manifest.ts';
import { MAX_NAME_LENGTH } from './vocabulary.ts';

/** Most tools one tools/list report may carry. */
export const MAX_MCP_TOOLS = 10_000;

const jsonObject = z.record(z.string(), z.unknown());

/** MCP ToolAnnotations: hints only, kept whole (unknown hints too). */
const annotationsSchema = z.looseObject({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});

/** One MCP Tool exactly as tools/list returned it (fields this schema does not name are kept). */
export const mcpToolSchema = z.looseObject({
  name: z.string().min(1),
  title: z.string().optional(),
  description: z.string().optional(),
  // MCP requires inputSchema; a server that omits it still gets its tools kept (no M2 check for them).
  inputSchema: jsonObject.optional(),
  outputSchema: jsonObject.optional(),
  annotations: annotationsSchema.optional(),
  _meta: jsonObject.optional(),
});
export type McpTool = z.infer<typeof mcpToolSchema>;

/** The body of POST /v1/mcp/tools. */
export const mcpToolsBodySchema = z
  .strictObject({
    server: z.string().min(1).max(128).describe("the gateway's name for the upstream server, e.g. secure-filesystem-server"),
    // Kept as the server sent it: a server that leaves out its version must not lose its report.
    server_info: z.looseObject({ name: z.string().optional(), version: z.string().optional() }).nullable().describe('the serverInfo of its initialize answer, if any'),
    tools: z.array(mcpToolSchema).max(MAX_MCP_TOOLS).describe('every tool of tools/list, all pages gathered'),
    seen_at: z.iso.datetime({ offset: true }).describe('when the gateway saw the list (ISO-8601)'),
  })
  .superRefine((b, ctx) => {
    const seen = new Set<string>();
    b.tools.forEach((t, i) => {
      if (seen.has(t.name)) ctx.addIssue({ code: 'custom', path: ['tools', i, 'name'], message: `"${t.name}" is listed twice` });
      seen.add(t.name);
      const id = mcpToolId(b.server, t.name);
      if (id.length > MAX_NAME_LENGTH) ctx.addIssue({ code: 'custom', path: ['tools', i, 'name'], message: `tool_id "${id.slice(0, 40)}…" is over ${MAX_NAME_LENGTH} characters` });
    });
  });
export type McpToolsBody = z.infer<typeof mcpToolsBodySchema>;

/** The fields whose change is a definition change, as the answer names them. */
const DEFINITION_FIELDS = ['description', 'title', 'input_schema', 'output_schema', 'annotations'] as const;
export type DefinitionField = (typeof DEFINITION_FIELDS)[number];

/** The answer of POST /v1/mcp/tools. */
export const mcpToolsAnswerSchema = z.strictObject({
  server: z.string(),
  version: z.number().int().nullable().describe('the manifest version applied; null when nothing changed'),
  added: z.array(z.string()).describe('tool_ids new in this server'),
  removed: z.array(z.string()).describe('tool_ids the server no longer lists'),
  changed: z.array(z.strictObject({ tool_id: z.string(), fields: z.array(z.enum(DEFINITION_FIELDS)) })).describe('tools whose definition changed, and which fields'),
  warnings: z.array(z.string()).describe('e.g. an inputSchema Ajv refuses: the tool is kept with input_schema null'),
});
export type McpToolsAnswer = z.infer<typeof mcpToolsAnswerSchema>;

/** The tool_id of an MCP tool: `server/name` (names are unique per server, not across servers). */
export function mcpToolId(server: string, name: string): string {
  return `${server}/${name}`;
}

/** The parts of a tool that define it (a change of any is a finding); absent ones are null. */
function definitionParts(t: McpTool): Record<DefinitionField, JsonValue> {
  return {
    description: t.description ?? null,
    title: t.title ?? null,
    input_schema: (t.inputSchema ?? null) as JsonValue,
    output_schema: (t.outputSchema ?? null) as JsonValue,
    annotations: (t.annotations ?? null) as JsonValue,
  };
}

/**
 * SHA-256 hex of the canonical JSON (sorted keys, as args_hash) of `{description, title,
 * inputSchema, outputSchema, annotations}`, absent fields left out: the hash the gateway's
 * `--pin-manifest` computes (emit/mcp/tool-definitions.ts), so both name a definition alike.
 */
export function definitionHash(t: Readonly<Record<string, unknown>>): string {
  const def: Record<string, JsonValue> = {};
  for (const f of ['description', 'title', 'inputSchema', 'outputSchema', 'annotations'] as const) if (t[f] !== undefined) def[f] = t[f] as JsonValue;
  return sha256Hex(canonicalArgs(def));
}

/** Which definition fields differ between two versions of a tool. */
export function changedFields(before: McpTool, after: McpTool): DefinitionField[] {
  const a = definitionParts(before);
  const b = definitionParts(after);
  return DEFINITION_FIELDS.filter((f) => canonicalArgs(a[f]) !== canonicalArgs(b[f]));
}

/**
 * Capability tags (M6) from explicit annotations only: an open-world tool takes in and sends out
 * what it finds beyond the user; a closed-world one works on the user's own data; no hint, no tag.
 */
function capabilityTags(t: McpTool): Pick<ManifestEntry, 'accesses_private_data' | 'receives_untrusted_input' | 'communicates_externally'> {
  const open = t.annotations?.openWorldHint;
  return { accesses_private_data: open === false, receives_untrusted_input: open === true, communicates_externally: open === true };
}

/** A tool's entry and what kept it from being whole. */
export interface McpEntry {
  entry: ManifestEntry;
  warnings: string[];
}

/**
 * The manifest entry of one MCP tool. `problems` says why a schema does not compile (defaults to
 * compiling it with Ajv); a schema that does not is dropped (null, no M2 check) with a warning,
 * so that one bad schema never refuses the server.
 */
export function mcpEntry(server: string, t: McpTool, problems: (s: unknown) => string[] = schemaProblems): McpEntry {
  const toolId = mcpToolId(server, t.name);
  const warnings: string[] = [];
  const usable = (s: Record<string, unknown> | undefined, field: string) => {
    if (s === undefined) return null;
    const why = problems(s);
    if (why.length === 0) return s;
    warnings.push(`${toolId}: ${field} refused (${why[0]}); kept without it`);
    return null;
  };
  const entry = manifestEntrySchema.parse({
    tool_id: toolId,
    name: t.title ?? t.annotations?.title ?? t.name,
    description: t.description ?? '',
    input_schema: usable(t.inputSchema, 'inputSchema'),
    output_schema: usable(t.outputSchema, 'outputSchema'),
    idempotent: t.annotations?.idempotentHint === true,
    ...capabilityTags(t),
    mcp: { server, tool: t.name, annotations: t.annotations ?? null, definition_hash: definitionHash(t) },
  });
  return { entry: { ...entry, name: entry.name ?? toolId }, warnings };
}
