/**
 * The dedup indexer: keeps `dedup_repeats` (migration 005) holding every call whose
 * (tool_id, args_hash) occurs more than once, so dedup candidates group a few percent of the
 * calls instead of all of them. Incremental: each run looks at the calls ingested since the
 * watermark (re-scanning an overlap, as inserts commit out of order), finds which of their keys
 * now occur twice or more in the whole table, and copies every call of those keys not yet copied
 * (a large backlog from the key prefixes counted at insert, migration 036, in parts of the key
 * space: DEDUP_PART_CALLS).
 * Idempotent (ReplacingMergeTree on (created_at, call_id), and copies skip what is there), so
 * several processes may run it; queries stay exact whatever its lag (dedup-candidates.ts).
 * Each run ends by replaying the keys whose cache replay is due (cache-replays.ts).
 */
import { serverNow } from '../platform/clickhouse/cutover.ts';
import { refreshCacheReplays, type ReplayCursor } from './cache-replays.ts';
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { chTime } from '../platform/clickhouse/statement.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { periodic, type PeriodicJob } from './scheduler.ts';

/** Calls ingested this long before the watermark are looked at again (late commits). */
export const DEDUP_OVERLAP_MS = 60_000;
/**
 * Calls one copy statement takes at most: a backlog of more calls than this (a first run over a
 * stored table, a backfill, a long stop) is copied from the counted prefixes, in parts of the key
 * space of at most this many candidate calls each; a smaller one in one statement by its own keys.
 */
export const DEDUP_PART_CALLS = 2_000_000;

const PROGRESS = `SELECT toUnixTimestamp64Milli(max(watermark)) AS wm, count() AS runs FROM {db:Identifier}.dedup_progress`;
const NEWEST = `SELECT toUnixTimestamp64Milli(max(ingested_at)) AS newest, count() AS n
FROM {db:Identifier}.tool_invocations WHERE ingested_at > {since:DateTime64(3, 'UTC')}`;
// The part of the key space a statement copies: args_key modulo the number of parts.
const PART = '(args_key % {parts:UInt64}) = {part:UInt64}';
const COLUMNS = `INSERT INTO {db:Identifier}.dedup_repeats (args_key, tool_id, args_hash, call_id, created_at, duration_ms, cost_usd, succeeded)
SELECT args_key, tool_id, args_hash, call_id, created_at, duration_ms, cost_usd, status = 'success'
FROM {db:Identifier}.tool_invocations`;

// A small backlog, by its own keys: those of the calls ingested in (since, until] that now occur
// at least twice anywhere, and every call of them not copied yet. Each copy also lands, grouped
// per key, in cache_key_calls (migration 019's view). The calls already copied are found by the
// same keys (a second scan of the table): finding them among the index's rows of every backlog
// key instead held 2.0 GB at 30 M calls against 0.9.
const BACKLOG_KEYS = `SELECT args_key FROM {db:Identifier}.tool_invocations
  WHERE ingested_at > {since:DateTime64(3, 'UTC')} AND ingested_at <= {until:DateTime64(3, 'UTC')}`;
const REPEATED_KEYS = `SELECT args_key FROM {db:Identifier}.tool_invocations
  WHERE args_key IN (${BACKLOG_KEYS}) GROUP BY args_key HAVING count() >= 2`;
const COPY = `${COLUMNS}
WHERE args_key IN (${REPEATED_KEYS})
  AND call_id NOT IN (SELECT call_id FROM {db:Identifier}.dedup_repeats WHERE args_key IN (${REPEATED_KEYS}))`;

// A large backlog, from the counts kept at insert (migration 036): the 32-bit prefixes counted
// twice or more are a superset of the repeated keys' prefixes, so grouping only the calls of those
// prefixes by args_key finds every repeated key of the table (~12 % of the calls in bench:history)
// without a hash table of every key. The backlog's keys are not singled out: a key repeated
// before it is copied already and skipped. Measured at 30 M calls, alone: docs/benchmarks.md.
const PREFIX = 'toUInt32(bitShiftRight(args_key, 32))';
// FINAL merges every row of a prefix into one (the table has no partitions).
const COUNTED = '{db:Identifier}.key_counts FINAL WHERE n >= 2';
const COUNTED_PREFIXES = `SELECT k FROM ${COUNTED}`;
const CANDIDATE_CALLS = `SELECT sum(n) AS calls FROM ${COUNTED}`;
const COUNTED_REPEATED_KEYS = `SELECT args_key FROM {db:Identifier}.tool_invocations
  WHERE ${PREFIX} IN (${COUNTED_PREFIXES}) AND ${PART} GROUP BY args_key HAVING count() >= 2`;
const COPY_COUNTED = `${COLUMNS}
WHERE ${PREFIX} IN (${COUNTED_PREFIXES}) AND ${PART} AND args_key IN (${COUNTED_REPEATED_KEYS})
  AND call_id NOT IN (SELECT call_id FROM {db:Identifier}.dedup_repeats WHERE ${PART} AND args_key IN (${COUNTED_REPEATED_KEYS}))`;

/**
 * Why a run may set the watermark to the server time S at its start, not only to the newest
 * ingested_at it saw: ingested_at is the server's now64() at insert, and the overlap is how late an
 * insert may commit after it. Every call with ingested_at ≤ S − overlap had committed by S, so the
 * run's NEWEST (read after S) saw it and the run indexed it (or an earlier run did). The watermark
 * means "everything ingested up to it minus the overlap is indexed", so S is as true as the newest
 * ingested_at, and larger once ingest pauses: readers' tail of keys they gather from the calls
 * themselves (every call ingested after watermark − overlap) then empties, instead of holding the
 * last minute of a burst until the next one. (A write of old ingested_at values by hand, as a
 * restore might do, was missed before too: such rows need the index rebuilt; docs/operations.md.)
 */
async function writeWatermark(ch: ClickHouseDoor, ms: number): Promise<void> {
  // Readers take the largest watermark: a step inside the overlap writes one that changes nothing.
  await ch.insertRows('dedup_progress', [{ key: `${ms}`, row: { watermark: chTime(ms) } }]);
}

/** What one indexing run did. */
export interface DedupIndexRun {
  /** New watermark (epoch ms), or the old one when nothing was new. */
  watermarkMs: number;
  /** Calls ingested since the previous watermark (overlap included). */
  scanned: number;
  /** Calls copied into dedup_repeats. */
  copied: number;
  /** Keys replayed into cache_key_replays (analyzers/cache-replays.ts). */
  replayed: number;
}

async function one<T>(ch: ClickHouseDoor, query: string, params: Record<string, unknown>): Promise<T | undefined> {
  return (await ch.select<T>(query, params))[0];
}

/** The indexer's watermark (epoch ms; 0 before its first run). */
export async function dedupWatermark(ch: ClickHouseDoor): Promise<number> {
  const p = await one<{ wm: number; runs: number }>(ch, PROGRESS, {});
  return Number(p?.runs ?? 0) === 0 ? 0 : Number(p?.wm ?? 0);
}

/**
 * Runs the indexer once. Throws an AppError when ClickHouse refuses (read-only user, down).
 * `replays` carries the cache replays' check from run to run (without it every key is checked).
 */
export async function refreshDedupIndex(ch: ClickHouseDoor, overlapMs = DEDUP_OVERLAP_MS, partCalls = DEDUP_PART_CALLS, replays?: ReplayCursor): Promise<DedupIndexRun> {
  const wm = await dedupWatermark(ch);
  const since = Math.max(0, wm - overlapMs);
  // Read before NEWEST: see writeWatermark.
  const startMs = await serverNow(ch);
  const newest = await one<{ newest: number; n: number }>(ch, NEWEST, { since: chTime(since) });
  const scanned = Number(newest?.n ?? 0);
  if (scanned === 0) {
    // Idle: only move on once the tail readers gather by hand would shrink noticeably (a row per run otherwise).
    // Replays still come due: a key copied less than the overlap ago, a manifest changed.
    const replayed = await refreshCacheReplays(ch, overlapMs, replays);
    if (startMs - wm < overlapMs / 2) return { watermarkMs: wm, scanned: 0, copied: 0, replayed };
    await writeWatermark(ch, startMs);
    return { watermarkMs: startMs, scanned: 0, copied: 0, replayed };
  }
  const until = Math.max(wm, Number(newest?.newest));
  const before = await one<{ c: number }>(ch, 'SELECT count() AS c FROM {db:Identifier}.dedup_repeats', {});
  if (scanned <= partCalls) await ch.command(COPY, { since: chTime(since), until: chTime(until) });
  else {
    const candidates = Number((await one<{ calls: number }>(ch, CANDIDATE_CALLS, {}))?.calls ?? 0);
    const parts = Math.max(1, Math.ceil(candidates / partCalls));
    for (let part = 0; part < parts; part++) await ch.command(COPY_COUNTED, { parts, part });
  }
  await writeWatermark(ch, Math.max(until, startMs));
  const after = await one<{ c: number }>(ch, 'SELECT count() AS c FROM {db:Identifier}.dedup_repeats', {});
  const replayed = await refreshCacheReplays(ch, overlapMs, replays);
  return { watermarkMs: Math.max(until, startMs), scanned, copied: Number(after?.c ?? 0) - Number(before?.c ?? 0), replayed };
}

/**
 * The indexer as a periodic job. Dedup answers stay exact without the index (only slower), so a
 * failing run is only logged (once per streak, by the scheduler) and tried again.
 */
export function createDedupIndexer(deps: { clickhouse: ClickHouseDoor; logger: Logger; metrics?: MetricsRegistry }): PeriodicJob<DedupIndexRun> {
  // The cache replays of this indexer's runs: checked from where the last run left off.
  const replays: ReplayCursor = {};
  return periodic('dedup index refresh', () => refreshDedupIndex(deps.clickhouse, DEDUP_OVERLAP_MS, DEDUP_PART_CALLS, replays), deps.logger, (r, ms) => {
    deps.metrics?.set('tool_audit_dedup_index_lag_seconds', 'Age of the dedup index watermark', r.watermarkMs ? (Date.now() - r.watermarkMs) / 1000 : -1);
    deps.metrics?.inc('tool_audit_dedup_index_copied_total', 'Calls copied into dedup_repeats', {}, r.copied);
    deps.metrics?.inc('tool_audit_cache_replays_total', 'Keys replayed into cache_key_replays', {}, r.replayed);
    if (r.copied > 0 || r.replayed > 0) deps.logger.debug({ ...r, ms }, 'dedup index refreshed');
  });
}
