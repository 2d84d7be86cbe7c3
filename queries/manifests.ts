/**
 * The tool manifest as the read API serves it: the current version (GET /v1/manifests) and one
 * tool's entry in every version (GET /v1/manifests/{tool_id}/history).
 */
import { z } from 'zod';
import { loadCurrentManifest, loadManifestHistory, MANIFEST_ROWS } from '../analyzers/manifest-store.ts';
import { manifestEntrySchema } from '../schemas/tool-manifest.ts';
import type { QueryContext, QuerySpec, StatementRunner } from './sql.ts';

/** The statement under both answers (every version's rows: a manifest is small). */
export const MANIFEST_VERSIONS: QuerySpec = { ...MANIFEST_ROWS, description: 'Every row of every manifest version (one per tool).', params: { db: 'database of the segments (Identifier)' } };

const iso = z.string().describe('ISO-8601 UTC timestamp with millisecond precision and Z');

/** GET /v1/manifests. */
export const manifestSchema = z.strictObject({
  version: z.number().int().nullable().describe('null before any manifest was applied'),
  effective_at: iso.nullable(),
  tools: z.record(z.string(), manifestEntrySchema).describe('tool_id → entry, every default applied'),
  warnings: z.array(z.string()).describe('warnings answered when this version was applied'),
  applied_by: z.string().nullable().describe("who applied this version: the API key id, 'local' (the CLI on the database), '' before that was recorded; null before any manifest"),
});
export type ManifestAnswer = z.infer<typeof manifestSchema>;

/** GET /v1/manifests/{tool_id}/history. */
export const manifestHistorySchema = z.strictObject({
  tool_id: z.string(),
  versions: z
    .array(z.strictObject({ version: z.number().int(), effective_at: iso, applied_by: z.string().describe('who applied the version'), entry: manifestEntrySchema.nullable().describe('null: the version does not declare the tool') }))
    .describe('newest first, every version since the first that declares the tool'),
});
export type ManifestHistoryAnswer = z.infer<typeof manifestHistorySchema>;

/** The current manifest. */
export async function currentManifest(ch: StatementRunner, db: string, ctx: QueryContext): Promise<ManifestAnswer> {
  // The newest version only: every version is a whole copy, so the history grows with each apply.
  const cur = (await loadCurrentManifest(ch, db, ctx)).current;
  if (!cur) return { version: null, effective_at: null, tools: {}, warnings: [], applied_by: null };
  return { version: cur.version, effective_at: new Date(cur.effectiveMs).toISOString(), tools: cur.manifest, warnings: cur.warnings, applied_by: cur.appliedBy };
}

/** One tool's entry in each version, newest first, from its first declaration on. */
export async function manifestHistory(ch: StatementRunner, db: string, p: { toolId: string }, ctx: QueryContext): Promise<ManifestHistoryAnswer> {
  const history = await loadManifestHistory(ch, db, ctx);
  const first = history.versions.findIndex((v) => v.manifest[p.toolId] !== undefined);
  const versions = first === -1 ? [] : history.versions.slice(first);
  return {
    tool_id: p.toolId,
    versions: versions
      .map((v) => ({ version: v.version, effective_at: new Date(v.effectiveMs).toISOString(), applied_by: v.appliedBy, entry: v.manifest[p.toolId] ?? null }))
      .reverse(),
  };
}
