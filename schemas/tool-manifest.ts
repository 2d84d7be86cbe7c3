/**
 * Tool manifests (tool-smith.md): a map `tool_id → entry`, every field but `tool_id` defaulted as
 * tool-smith says, plus our `billable` and `cost_usd_per_call`. Parsing is all-or-nothing: a
 * document is accepted whole or refused with every error named (path and reason). Pure.
 */
import { z } from 'zod';
import { schemaProblems } from './json-schema-check.ts';
import { MAX_NAME_LENGTH } from './vocabulary.ts';

const count = (what: string) => z.number().int(`${what} must be an integer`).min(0, `${what} must be ≥ 0`);
const positive = (what: string) => z.number().int(`${what} must be an integer`).positive(`${what} must be > 0`);
const flag = z.boolean().default(false);
/** A JSON Schema inline (object or boolean); a path must be resolved by the loader before parsing. */
const schemaRef = z
  .union([z.record(z.string(), z.unknown()), z.boolean(), z.string()])
  .nullable()
  .default(null)
  .superRefine((v, ctx) => {
    if (typeof v === 'string') ctx.addIssue({ code: 'custom', message: `is a path (${v}); paths are resolved by \`tool-audit manifests apply\` only: inline the schema` });
  })
  .transform((v) => (typeof v === 'string' ? null : v));

/** Where an MCP tool's entry came from (schemas/mcp-tools.ts builds it). */
export const mcpTagSchema = z.strictObject({
  server: z.string().min(1),
  tool: z.string().min(1),
  annotations: z.record(z.string(), z.unknown()).nullable(),
  definition_hash: z.string().regex(/^[0-9a-f]{64}$/, 'definition_hash must be 64 lowercase hex digits'),
});

/** One tool's entry with every default applied. */
export const manifestEntrySchema = z.strictObject({
  tool_id: z.string().min(1).max(MAX_NAME_LENGTH),
  name: z.string().optional(),
  description: z.string().default(''),
  input_schema: schemaRef,
  output_schema: schemaRef,
  /** tool-smith gives no default: a tool is idempotent only when its manifest says so. */
  idempotent: flag,
  /** null: no timeout declared (M3 does not apply). */
  timeout_ms: positive('timeout_ms').nullable().default(null),
  accesses_private_data: flag,
  receives_untrusted_input: flag,
  communicates_externally: flag,
  /** null: the orchestrator's global default applies, which tool-audit does not know (M5 checks idempotency only). */
  max_retries: count('max_retries').nullable().default(null),
  requires_approval: flag,
  rate_limit_rpm: positive('rate_limit_rpm').nullable().default(null),
  /** 0 or null: no cache. */
  cache_ttl_ms: count('cache_ttl_ms').nullable().default(null),
  /** Our extension: the tool has an API cost, so every call must carry cost_usd (M7). */
  billable: flag,
  /** Our extension: an estimate of one call's cost, for tools whose calls do not report it. */
  cost_usd_per_call: z.number().min(0).nullable().default(null),
  /**
   * Our extension: the tool came from an MCP server's tools/list through the `tool-audit mcp`
   * gateway (POST /v1/mcp/tools); null for tools declared by hand. An MCP apply replaces only the
   * entries tagged with its server, so the tag is what keeps servers and hand-written tools apart.
   */
  mcp: mcpTagSchema.nullable().default(null),
});

/** A manifest entry as stored and served (defaults applied, `name` defaulted to tool_id). */
export type ManifestEntry = Omit<z.output<typeof manifestEntrySchema>, 'name'> & { name: string };

/** A whole manifest: tool_id → entry. */
export type Manifest = Record<string, ManifestEntry>;

/** What parsing a document gave: the manifest and its warnings, or every error. */
export type ManifestParse = { ok: true; manifest: Manifest; warnings: string[] } | { ok: false; errors: string[] };

/** The three capability tags together: tool-smith's exfiltration path. */
export function isTrifecta(e: Pick<ManifestEntry, 'accesses_private_data' | 'receives_untrusted_input' | 'communicates_externally'>): boolean {
  return e.accesses_private_data && e.receives_untrusted_input && e.communicates_externally;
}

/** Parses a manifest document (the map, already decoded from JSON or YAML). */
export function parseManifest(doc: unknown): ManifestParse {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { ok: false, errors: ['manifest: must be a map of tool_id → entry'] };
  const errors: string[] = [];
  const manifest: Manifest = {};
  const keys = Object.keys(doc);
  if (keys.length === 0) errors.push('manifest: declares no tool');
  for (const key of keys) {
    const raw = (doc as Record<string, unknown>)[key];
    const declared = (raw as { tool_id?: unknown } | null)?.tool_id;
    if (typeof declared === 'string' && declared !== key) errors.push(`${key}.tool_id: is "${declared}" but the entry is keyed "${key}"`);
    const r = manifestEntrySchema.safeParse(raw);
    if (!r.success) {
      for (const issue of r.error.issues) errors.push(`${[key, ...issue.path.map(String)].join('.')}: ${issue.message}`);
      continue;
    }
    for (const field of ['input_schema', 'output_schema'] as const) {
      const s = r.data[field];
      if (s !== null) for (const p of schemaProblems(s)) errors.push(`${key}.${field}: ${p}`);
    }
    manifest[key] = { ...r.data, name: r.data.name ?? key };
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, manifest, warnings: manifestWarnings(manifest) };
}

/** Warnings that do not refuse a manifest: a lethal trifecta without approval, billable without cost estimate. */
export function manifestWarnings(m: Manifest): string[] {
  const out: string[] = [];
  for (const e of Object.values(m)) {
    if (isTrifecta(e) && !e.requires_approval) {
      out.push(`${e.tool_id}: accesses_private_data, receives_untrusted_input and communicates_externally without requires_approval (the lethal trifecta: an exfiltration path)`);
    }
  }
  return out;
}
