/**
 * The `tool_manifests` segment: applying a manifest (a new version of the whole document, in one
 * insert) and reading every version back. Parsing and checking happen before (schemas/); a
 * manifest reaching {@link applyManifest} is complete and valid.
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { chTime, type ReadLimits, type StatementRunner } from '../platform/clickhouse/statement.ts';
import { manifestWarnings, type Manifest, type ManifestEntry } from '../schemas/tool-manifest.ts';
import { ManifestHistory, type ManifestVersion } from './manifest-versions.ts';

/** Every row of every version (a manifest is a few hundred rows per version). */
export const MANIFEST_ROWS = {
  name: 'manifest_rows',
  sql: `SELECT version, toUnixTimestamp64Milli(effective_at) AS effective_ms, tools, tool_id, entry, warnings
FROM {db:Identifier}.tool_manifests
ORDER BY version, tool_id`,
};

const LIMITS: ReadLimits = { limits: { maxExecutionSeconds: 30, maxResultRows: 1_000_000 } };

interface ManifestRow {
  version: number;
  effective_ms: number | string;
  tools: number;
  tool_id: string;
  entry: string;
  warnings: string[];
}

/** Every applied version, oldest first (a version missing rows, never written whole, is skipped). */
export async function loadManifestHistory(runner: StatementRunner, db: string, ctx: ReadLimits = LIMITS): Promise<ManifestHistory> {
  const rows = await runner.read<ManifestRow>(MANIFEST_ROWS, { db }, ctx);
  const versions = new Map<number, ManifestVersion & { expected: number }>();
  for (const r of rows) {
    const v = Number(r.version);
    let mv = versions.get(v);
    if (!mv) {
      mv = { version: v, effectiveMs: Number(r.effective_ms), manifest: {}, warnings: r.warnings, expected: Number(r.tools) };
      versions.set(v, mv);
    }
    mv.manifest[r.tool_id] = JSON.parse(r.entry) as ManifestEntry;
  }
  return new ManifestHistory([...versions.values()].filter((v) => Object.keys(v.manifest).length === v.expected));
}

/** What an apply stored. */
export interface AppliedVersion {
  version: number;
  effective_at: string;
  tools: number;
  warnings: string[];
}

// Applies of one process run one at a time (version numbers are max + 1); run applies from one
// place at a time across processes, as with the analyzer.
const queues = new WeakMap<ClickHouseDoor, Promise<unknown>>();

/**
 * Stores `manifest` as the next version, taking effect at `nowMs` (or 1 ms after the previous
 * version if the clock went back: versions take effect in apply order). Nothing older changes.
 */
export function applyManifest(door: ClickHouseDoor, manifest: Manifest, nowMs: number = Date.now()): Promise<AppliedVersion> {
  const run = async (): Promise<AppliedVersion> => {
    const history = await loadManifestHistory(door, door.database);
    const last = history.current;
    const version = (last?.version ?? 0) + 1;
    const effective = Math.max(nowMs, (last?.effectiveMs ?? -1) + 1);
    const warnings = manifestWarnings(manifest);
    const entries = Object.values(manifest);
    await door.insertRows(
      'tool_manifests',
      entries.map((e) => ({
        key: `v${version}/${e.tool_id}`,
        row: {
          version,
          effective_at: chTime(effective),
          tools: entries.length,
          tool_id: e.tool_id,
          entry: JSON.stringify(e),
          idempotent: e.idempotent ? 1 : 0,
          cache_ttl_ms: e.cache_ttl_ms,
          warnings,
        },
      })),
    );
    return { version, effective_at: new Date(effective).toISOString(), tools: entries.length, warnings };
  };
  const next = (queues.get(door) ?? Promise.resolve()).then(run, run);
  queues.set(door, next.catch(() => undefined));
  return next;
}
