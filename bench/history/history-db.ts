/**
 * The data directories of `npm run bench:history`: the built history under <data-dir>/base (with
 * its meta in <data-dir>/base.json), never served itself; a full copy of it per measured run
 * (<data-dir>/run: `serve` writes watermarks, violations and ingested rows into it, so each run
 * starts from the same untouched history); an empty <data-dir>/baseline for the ingest baseline.
 * Every chDB access runs in bench/history-db-child.ts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { benchChild } from '../bench-process.ts';
import { linkCopy } from '../ingest/ingest-preload.ts';
import type { StorageReport } from './storage-report.ts';
import { HISTORY_GENERATOR, type HistoryMeta, type HistoryShape, type RunState } from './history-data.ts';


/** Runs bench/history/history-db-child.ts (one data directory per process). */
const child = <T>(cmd: 'build' | 'inspect' | 'migrate' | 'storage' | 'jobs', o: object, log: (s: string) => void): Promise<T> => benchChild<T>(new URL('./history-db-child.ts', import.meta.url), cmd, o, log);

/** The history of this shape: reused when <dir>/base.json records the same shape and generator, else built. */
export async function ensureHistory(dir: string, shape: HistoryShape, log: (s: string) => void): Promise<HistoryMeta & { built: boolean }> {
  const base = join(resolve(dir), 'base');
  const metaFile = join(resolve(dir), 'base.json');
  if (existsSync(metaFile) && existsSync(base)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as HistoryMeta;
    if (JSON.stringify(meta.shape) === JSON.stringify(shape) && meta.generator === HISTORY_GENERATOR) {
      log(`reusing the history in ${base} (built ${meta.builtAt} in ${meta.buildSeconds.toFixed(0)} s)`);
      // The schema of this code: a serve run must not spend its measured time on a migration's mutations.
      const t0 = performance.now();
      const { applied } = await child<{ applied: string[] }>('migrate', { dataDir: base }, log);
      if (applied.length) log(`  migrated the history (${applied.join(', ')}) in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      return { ...meta, built: false };
    }
  }
  log(`building ${shape.invocations.toLocaleString('en')} calls over ${shape.tasks.toLocaleString('en')} tasks and ${shape.days} days into ${base}`);
  // The meta file goes first and last: a build that dies half-way is never reused.
  rmSync(metaFile, { force: true });
  rmSync(base, { recursive: true, force: true });
  mkdirSync(base, { recursive: true });
  const meta = await child<HistoryMeta>('build', { dataDir: base, shape }, log);
  writeFileSync(metaFile, JSON.stringify(meta, null, 2));
  return { ...meta, built: true };
}

/**
 * A fresh copy of the history for one run; returns its path and seconds. `full`: `cp -a`, parts
 * not shared with the base; `link`: part directories hard-linked (ClickHouse never changes a part
 * in place), for a history too large to hold twice on the disk.
 */
export function copyHistory(dir: string, mode: 'full' | 'link' = 'full'): { dataDir: string; copySeconds: number; bytes: number } {
  const run = join(resolve(dir), 'run');
  const t0 = performance.now();
  rmSync(run, { recursive: true, force: true });
  if (mode === 'link') linkCopy(join(resolve(dir), 'base'), run);
  else execFileSync('cp', ['-a', join(resolve(dir), 'base'), run]);
  return { dataDir: run, copySeconds: (performance.now() - t0) / 1000, bytes: Number(execFileSync('du', ['-sb', run]).toString().split('\t')[0]) };
}

/** An empty data directory for the baseline. */
export function emptyDataDir(dir: string): string {
  const d = join(resolve(dir), 'baseline');
  rmSync(d, { recursive: true, force: true });
  mkdirSync(d, { recursive: true });
  return d;
}

/** Bytes per table, projection and column of a data directory's active parts (bench:storage). */
export function storageOf(dataDir: string, log: (s: string) => void): Promise<StorageReport> {
  return child<StorageReport>('storage', { dataDir }, log);
}

/**
 * What a deployment adds to the history once its jobs have caught up (bench:storage): the dedup
 * indexer run over every call, and the audit log built over every record with one signed head.
 */
export function runJobs(dataDir: string, log: (s: string) => void): Promise<{ dedupSeconds: number; auditSeconds: number; leaves: number }> {
  return child('jobs', { dataDir }, log);
}

/** Watermark writes, violations and rows of a stopped run's data directory. */
export function inspectRun(dataDir: string, log: (s: string) => void): Promise<RunState> {
  return child<RunState>('inspect', { dataDir }, log);
}

/** The command-line options of a bench:history-shaped history (bench:history, bench:storage, bench:audit-log). */
export function historyShapeOptions(invocations: string) {
  const s = { type: 'string' } as const;
  return {
    invocations: { ...s, default: invocations },
    tasks: s,
    days: { ...s, default: '21' },
    'data-dir': { ...s, default: './.bench-data/history' },
    'i11-share': { ...s, default: '0.1' },
    'i4-share': { ...s, default: '0.005' },
    optimize: { ...s, default: 'true' },
  };
}

/** The history shape those options describe (N/100 tasks unless --tasks). */
export function historyShapeOf(opt: { invocations?: string | boolean; tasks?: string | boolean; days?: string | boolean; 'i11-share'?: string | boolean; 'i4-share'?: string | boolean; optimize?: string | boolean }) {
  const n = Number(opt.invocations);
  return { invocations: n, tasks: Number(opt.tasks ?? Math.max(1, Math.round(n / 100))), days: Number(opt.days), i11Share: Number(opt['i11-share']), i4Share: Number(opt['i4-share']), ...(opt.optimize === 'false' ? { optimize: false as const } : {}) };
}

