/**
 * The tool manifest as the read API serves it: the current version (GET /v1/manifests) and one
 * tool's entry in every version (GET /v1/manifests/{tool_id}/history).
 */
import { loadCurrentManifest, loadManifestHistory, MANIFEST_ROWS } from '../analyzers/manifest-store.ts';
import type { ManifestAnswer, ManifestHistoryAnswer } from '../schemas/answers.ts';
import type { QueryContext, QuerySpec, StatementRunner } from './sql.ts';

/** The statement under both answers (every version's rows: a manifest is small). */
export const MANIFEST_VERSIONS: QuerySpec = { ...MANIFEST_ROWS, description: 'Every row of every manifest version (one per tool).', params: { db: 'database of the segments (Identifier)' } };


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
