/**
 * The `tool_manifests` segment: applying a manifest (a new version of the whole document, in one
 * insert) and reading every version back. Parsing and checking happen before (schemas/); a
 * manifest reaching {@link applyManifest} is complete and valid.
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { chTime, type ReadLimits, type StatementRunner } from '../platform/clickhouse/statement.ts';
import { manifestWarnings, type Manifest, type ManifestEntry } from '../schemas/tool-manifest.ts';
import { claimVersion } from './manifest-claims.ts';
import { ManifestHistory, type ManifestVersion } from './manifest-versions.ts';

/** Every row of every version (a manifest is a few hundred rows per version). */
export const MANIFEST_ROWS = {
  name: 'manifest_rows',
  sql: `SELECT version, toUnixTimestamp64Milli(effective_at) AS effective_ms, tools, tool_id, entry, warnings, applied_by
FROM {db:Identifier}.tool_manifests
ORDER BY version, tool_id`,
};

/** The rows of the newest version only (a version is one insert: all there or not at all). */
const CURRENT_MANIFEST_ROWS = {
  name: 'manifest_current_rows',
  sql: `SELECT version, toUnixTimestamp64Milli(effective_at) AS effective_ms, tools, tool_id, entry, warnings, applied_by
FROM {db:Identifier}.tool_manifests
WHERE version = (SELECT max(version) FROM {db:Identifier}.tool_manifests)
ORDER BY tool_id`,
};

const LIMITS: ReadLimits = { limits: { maxExecutionSeconds: 30, maxResultRows: 1_000_000 } };

interface ManifestRow {
  version: number;
  effective_ms: number | string;
  tools: number;
  tool_id: string;
  entry: string;
  warnings: string[];
  applied_by: string;
}

/** Every applied version, oldest first (a version missing rows, never written whole, is skipped). */
export async function loadManifestHistory(runner: StatementRunner, db: string, ctx: ReadLimits = LIMITS): Promise<ManifestHistory> {
  return historyOf(await runner.read<ManifestRow>(MANIFEST_ROWS, { db }, ctx));
}

/**
 * The newest version alone, as a history of one (what an apply that only replaces part of the
 * manifest needs): a report sent on every tools/list should not read every version ever applied.
 */
export async function loadCurrentManifest(runner: StatementRunner, db: string, ctx: ReadLimits = LIMITS): Promise<ManifestHistory> {
  return historyOf(await runner.read<ManifestRow>(CURRENT_MANIFEST_ROWS, { db }, ctx));
}

function historyOf(rows: readonly ManifestRow[]): ManifestHistory {
  const versions = new Map<number, ManifestVersion & { expected: number }>();
  for (const r of rows) {
    const v = Number(r.version);
    let mv = versions.get(v);
    if (!mv) {
      mv = { version: v, effectiveMs: Number(r.effective_ms), manifest: {}, warnings: r.warnings, appliedBy: r.applied_by, expected: Number(r.tools) };
      versions.set(v, mv);
    }
    // Versions stored before the `mcp` tag existed have no such field: they declared no MCP tool.
    mv.manifest[r.tool_id] = { mcp: null, ...(JSON.parse(r.entry) as Omit<ManifestEntry, 'mcp'>) };
  }
  return new ManifestHistory([...versions.values()].filter((v) => Object.keys(v.manifest).length === v.expected));
}

/** What an apply stored. */
export interface AppliedVersion {
  version: number;
  effective_at: string;
  tools: number;
  warnings: string[];
  /** Who applied it: the API key id, or `local` (the CLI on the database itself). */
  applied_by: string;
}

// Applies of one process run one at a time; across processes, each claims its version number
// first (manifest-claims.ts).
const queues = new WeakMap<ClickHouseDoor, Promise<unknown>>();

/**
 * Runs `work` after every apply of this process through `door` that came before it: the one
 * queue under PUT /v1/manifests and POST /v1/mcp/tools, so that an MCP apply's "current
 * manifest" is still current when its version is written.
 */
export function serializedApply<T>(door: ClickHouseDoor, work: () => Promise<T>): Promise<T> {
  const next = (queues.get(door) ?? Promise.resolve()).then(work, work);
  queues.set(door, next.catch(() => undefined));
  return next;
}

/** When the next version takes effect after `history`'s current one: now, or 1 ms after it if the clock went back. */
export function nextEffectiveMs(history: ManifestHistory, nowMs: number): number {
  return Math.max(nowMs, (history.current?.effectiveMs ?? -1) + 1);
}

/**
 * Writes `manifest` as version `next.version` (in one insert: a version is all there or not at
 * all). Call it inside {@link serializedApply}.
 */
export async function writeManifestVersion(door: ClickHouseDoor, manifest: Manifest, next: { version: number; effectiveMs: number }, appliedBy: string): Promise<AppliedVersion> {
  const { version, effectiveMs } = next;
  const warnings = manifestWarnings(manifest);
  const entries = Object.values(manifest);
  await door.insertRows(
    'tool_manifests',
    entries.map((e) => ({
      key: `v${version}/${e.tool_id}`,
      row: {
        version,
        effective_at: chTime(effectiveMs),
        tools: entries.length,
        tool_id: e.tool_id,
        entry: JSON.stringify(e),
        idempotent: e.idempotent ? 1 : 0,
        cache_ttl_ms: e.cache_ttl_ms,
        warnings,
        applied_by: appliedBy,
      },
    })),
  );
  return { version, effective_at: new Date(effectiveMs).toISOString(), tools: entries.length, warnings, applied_by: appliedBy };
}

/**
 * Stores `manifest` as the next version, taking effect at `nowMs` (or 1 ms after the previous
 * version if the clock went back: versions take effect in apply order), recording who applied
 * it. Nothing older changes. The number is claimed first, so applies from several processes at
 * once each get their own (manifest-claims.ts).
 */
export function applyManifest(door: ClickHouseDoor, manifest: Manifest, nowMs: number = Date.now(), appliedBy = 'local'): Promise<AppliedVersion> {
  return serializedApply(door, async () => {
    const version = await claimVersion(door, appliedBy);
    const effectiveMs = nextEffectiveMs(await loadCurrentManifest(door, door.database), nowMs);
    return writeManifestVersion(door, manifest, { version, effectiveMs }, appliedBy);
  });
}
