/**
 * Preloaded databases for the ingest benchmark (`--preload N`, `--preload-quarantine M`): ingest
 * into a database that already holds N calls (with their outputs and dependencies, the data of
 * `npm run bench:queries`: bench/reads/queries-data.ts) and M quarantined packets, not into an empty one,
 * since key look-ups and merges cost more on a big table.
 *
 * The database is built once, in a child process (bench/ingest/ingest-preload-child.ts: chDB holds one
 * data directory per process), and cached under `<cache root>/<N>-<M>-<hash>/data`; the hash
 * covers the shape and the sources that make the data and the schema (generator, migrations), so
 * a cache is reused only when a rebuild would give the same database. Each phase of the benchmark
 * runs on a copy of it. `full` copies every file (`cp -a`); `link` hard-links the part directories
 * (immutable in ClickHouse: merges and mutations write new parts) and copies the rest (table
 * metadata, which ALTER … MODIFY TTL rewrites, mutation and dedup logs).
 */
import { benchChild } from '../bench-process.ts';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RowCounts } from './ingest-preload-child.ts';

export type { RowCounts } from './ingest-preload-child.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const DATABASE = 'tool_audit';

/** A built (or reused) preloaded database. */
export interface Preload {
  calls: number;
  quarantine: number;
  shape: { invocations: number; tasks: number; days: number };
  /** The cached data directory (never written by a run), or undefined when nothing is preloaded. */
  dataDir: string | undefined;
  /** Rows it holds. */
  counts: RowCounts;
  /** Seconds the build took (when it was built, now or earlier), and whether it was built in this run. */
  buildSeconds: number;
  builtNow: boolean;
  sizeBytes: number;
}

/** How a phase gets its copy of the cache. */
export type CopyMode = 'full' | 'link';

const ZERO: RowCounts = { invocations: 0, invocationsUnique: 0, outputs: 0, outputsUnique: 0, quarantine: 0, workflows: 0 };

/** Runs bench/ingest/ingest-preload-child.ts and returns the counts it prints. */
const child = (cmd: 'build' | 'count', o: object, log: (s: string) => void): Promise<RowCounts> => benchChild<RowCounts>(new URL('./ingest-preload-child.ts', import.meta.url), cmd, o, log);

/** Rows of the benchmark's tables in a data directory no process holds. */
export function countRows(dataDir: string, log: (s: string) => void): Promise<RowCounts> {
  return child('count', { dataDir, database: DATABASE }, log);
}

/** Bytes under a directory (apparent size, every file counted once per path). */
export function treeBytes(dir: string): number {
  return Number(execFileSync('du', ['-sb', dir]).toString().split('\t')[0]);
}

/**
 * Days the preloaded calls span. bench:queries spans 30, but outputs and dependencies are kept 30
 * days: its oldest rows expire as the run goes (TTL merges drop them, and the counts no longer
 * add up). 21 days keeps every row within retention for a week after the build.
 */
const DAYS = 21;
/** Retention of outputs and dependencies (platform/config.ts defaults), the shortest of the preloaded rows. */
const SHORTEST_RETENTION_DAYS = 30;

function cacheKey(calls: number, quarantine: number): { shape: Preload['shape']; hash: string } {
  // The shape of bench:queries (10 M calls over 100 000 tasks), scaled, over DAYS.
  const shape = { invocations: calls, tasks: Math.max(1, Math.round(calls / 100)), days: DAYS };
  const h = createHash('sha256').update(JSON.stringify({ shape, quarantine }));
  const migrations = join(ROOT, 'platform/clickhouse/migrations');
  const sources = ['bench/reads/queries-data.ts', 'bench/ingest/ingest-preload-child.ts', 'analyzers/dedup-index.ts', 'platform/clickhouse/migrate.ts'].map((f) => join(ROOT, f));
  for (const f of [...sources, ...readdirSync(migrations).sort().map((f) => join(migrations, f))]) h.update(f).update(readFileSync(f));
  return { shape, hash: h.digest('hex').slice(0, 12) };
}

/** The cached database of N calls and M quarantined packets under `root`: reused, or built now. */
export async function ensurePreload(calls: number, quarantine: number, root: string, log: (s: string) => void): Promise<Preload> {
  const { shape, hash } = cacheKey(calls, quarantine);
  if (calls === 0 && quarantine === 0) {
    return { calls, quarantine, shape, dataDir: undefined, counts: ZERO, buildSeconds: 0, builtNow: false, sizeBytes: 0 };
  }
  const dir = join(root, `${calls}-${quarantine}-${hash}`);
  const metaFile = join(dir, 'preload.json');
  if (existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as Preload & { builtAt: string };
    // Its rows end at the start of the build's day (UTC); the oldest must not reach retention during a run.
    const expires = Date.parse(meta.builtAt.slice(0, 10)) + (SHORTEST_RETENTION_DAYS - DAYS - 1) * 86_400_000;
    if (Date.now() < expires) {
      log(`preload: reusing ${dir} (${(meta.sizeBytes / 1e9).toFixed(2)} GB, built ${meta.builtAt} in ${meta.buildSeconds.toFixed(0)} s)`);
      return { ...meta, dataDir: join(dir, 'data'), builtNow: false };
    }
    log(`preload: ${dir} was built ${meta.builtAt}: its oldest rows are near retention; rebuilding`);
    rmSync(dir, { recursive: true, force: true });
  }
  // Built beside its final place and renamed when complete: an interrupted build is never reused.
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  log(`preload: building ${calls.toLocaleString('en')} calls (${JSON.stringify(shape)}) and ${quarantine.toLocaleString('en')} quarantined packets in ${dir}`);
  const t0 = performance.now();
  const counts = await child('build', { dataDir: join(building, 'data'), database: DATABASE, shape, quarantine }, log);
  const buildSeconds = (performance.now() - t0) / 1000;
  const meta: Preload = { calls, quarantine, shape, dataDir: undefined, counts, buildSeconds, builtNow: true, sizeBytes: treeBytes(join(building, 'data')) };
  writeFileSync(join(building, 'preload.json'), JSON.stringify({ ...meta, builtAt: new Date().toISOString() }, null, 2));
  renameSync(building, dir);
  log(`preload: built in ${buildSeconds.toFixed(0)} s, ${(meta.sizeBytes / 1e9).toFixed(2)} GB: ${JSON.stringify(counts)}`);
  return { ...meta, dataDir: join(dir, 'data') };
}

/** Whether a directory of a table's store is a data part (`<partition>_<min>_<max>_<level>[_<mutation>]`). */
const isPart = (name: string) => /^[A-Za-z0-9-]+_\d+_\d+_\d+(_\d+)?$/.test(name);

/** Hard links the part directories of `src` into `dst` and copies every other file (parts are immutable: a run writes new ones). */
export function linkCopy(src: string, dst: string): void {
  mkdirSync(dst, { recursive: true });
  for (const e of readdirSync(src, { withFileTypes: true })) {
    const from = join(src, e.name);
    const to = join(dst, e.name);
    if (e.isDirectory() && isPart(e.name) && existsSync(join(from, 'checksums.txt'))) execFileSync('cp', ['-al', from, to]);
    else if (e.isDirectory()) linkCopy(from, to);
    else execFileSync('cp', ['-a', from, to]);
  }
}

/** A fresh data directory for one phase: a copy of the preload, or empty. Returns it and the copy's seconds. */
export function freshDataDir(preload: Preload, prefix: string, mode: CopyMode): { dataDir: string; copySeconds: number } {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  if (!preload.dataDir) return { dataDir, copySeconds: 0 };
  const t0 = performance.now();
  rmSync(dataDir, { recursive: true });
  if (mode === 'link') linkCopy(preload.dataDir, dataDir);
  else execFileSync('cp', ['-a', preload.dataDir, dataDir]);
  return { dataDir, copySeconds: (performance.now() - t0) / 1000 };
}

/**
 * A checksum of every file of the cache (path, size, content): taken before and after a run with
 * `--preload-check` to show a run did not change the cache (what `link` copies rely on).
 */
export function treeChecksum(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) h.update(`${p}\0${statSync(p).size}\0`).update(readFileSync(p));
      else h.update(`${p}\0link\0`);
    }
  };
  walk(dir);
  return h.digest('hex');
}
