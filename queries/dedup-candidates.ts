/**
 * Dedup candidates (SPEC §5, GET /v1/dedup/candidates?min_count=2): calls repeated with identical
 * args (same tool_id and args_hash) in the window, and what the repeats beyond the first cost.
 *
 * Almost every (tool_id, args_hash) is unique, and grouping millions of unique 64-character keys
 * is what makes the naive query slow. So groups are formed on 8-byte numbers (args_key =
 * cityHash64(tool_id, args_hash), migration 002), from as few calls as possible:
 *  - DEDUP_CANDIDATES_INDEXED: the calls the dedup indexer copied into dedup_repeats (only calls
 *    of repeated keys; migrations 005/006, dedup-index.ts), plus every call of any key seen among
 *    the calls ingested after its watermark (minus an overlap). A key that repeats has either all
 *    its calls indexed or a call after the watermark, which brings them all: exact at any lag.
 *  - DEDUP_CANDIDATES, when the indexer lags by more than DEDUP_LIVE_MAX_ROWS calls (or never ran
 *    on a big table): two passes over the table, the keys seen min_count times, then their calls.
 * Each group carries a second hash of (tool_id, args_hash); if it varies within an args_key (a
 * cityHash64 collision, odds ~1e-9 at 10 M calls) the answer is recomputed grouping by
 * (tool_id, args_hash) itself (DEDUP_CANDIDATES_EXACT). tool_id and args_hash of the page's groups
 * are then looked up by key (DEDUP_GROUP_NAMES).
 */
import { z } from 'zod';
import { cursorCodec, numKey } from './cursor.ts';
import { DEDUP_OVERLAP_MS } from '../analyzers/dedup-index.ts';
import type { Dedup } from '../schemas/answers.ts';
import { chTime, isoTime, PAGE_PARAM_DOCS, pageOf, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

// The 8-byte columns of a call, as dedup_repeats stores them (migration 006). "First" call of a
// group: earliest created_at, then a hash of call_id, so savings never change between requests.
const KEYS_OF_CALL = `args_key, sipHash64(tool_id, args_hash) AS check_key,
  reinterpretAsUInt64(reverse(unhex(substring(args_hash, 1, 16)))) AS hash_prefix,
  toUInt64(toUnixTimestamp64Milli(created_at)) * 65536 + cityHash64(call_id) % 65536 AS first_order,
  created_at, duration_ms, cost_usd`;
const WINDOW = "created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}";

const AGGREGATES = `count() AS calls,
    sum(duration_ms) - argMin(duration_ms, first_order) AS potential_savings_ms,
    sum(ifNull(cost_usd, 0)) - argMin(ifNull(cost_usd, 0), first_order) AS potential_savings_usd,
    toUnixTimestamp64Milli(min(created_at)) AS first_ms, toUnixTimestamp64Milli(max(created_at)) AS last_ms`;
// names: tool_id and args_hash of each group (reading 64-character args_hash for every call is
// what the index avoids; the indexed statement leaves them empty and they are looked up after).
const BY_KEY = (rows: string, names: boolean) => `SELECT args_key, ${names ? 'any(tool_id) AS g_tool, any(args_hash) AS g_hash' : "'' AS g_tool, '' AS g_hash"},
    any(hash_prefix) AS prefix, ${AGGREGATES}, min(check_key) != max(check_key) AS collided
  FROM ${rows} GROUP BY args_key HAVING calls >= {min_count:UInt32}`;
const BY_NAME = (rows: string) => `SELECT any(args_key) AS args_key, any(tool_id) AS g_tool, any(args_hash) AS g_hash, any(hash_prefix) AS prefix, ${AGGREGATES}, 0 AS collided
  FROM ${rows} GROUP BY tool_id, args_hash HAVING calls >= {min_count:UInt32}`;

// Totals over every group (window functions, before the page is cut), then the page: count and
// savings descending, ties by args_hash (its first 16 digits), then args_key.
const PAGED = (groups: string) => `SELECT g_tool AS tool_id, g_hash AS args_hash, toString(args_key) AS key_text, toString(prefix) AS prefix_text, calls AS count, potential_savings_ms, potential_savings_usd,
  first_ms, last_ms, total_groups, total_duplicate_calls, total_savings_ms, total_savings_usd, collisions
FROM (
  SELECT *, count() OVER () AS total_groups, sum(calls) OVER () - count() OVER () AS total_duplicate_calls,
    sum(potential_savings_ms) OVER () AS total_savings_ms, sum(potential_savings_usd) OVER () AS total_savings_usd,
    max(collided) OVER () AS collisions
  FROM (${groups})
)
WHERE NOT {has_cursor:Bool} OR (toInt64(-calls), toInt64(-potential_savings_ms), prefix, args_key) > (toInt64(-{c_n:UInt64}), toInt64(-{c_ms:UInt64}), {c_prefix:UInt64}, {c_key:UInt64})
ORDER BY calls DESC, potential_savings_ms DESC, prefix, args_key
LIMIT {limit:UInt32}`;

const TWO_PASS_ROWS = `(SELECT tool_id, args_hash, ${KEYS_OF_CALL} FROM {db:Identifier}.tool_invocations
  WHERE ${WINDOW} AND args_key IN (SELECT args_key FROM {db:Identifier}.tool_invocations WHERE ${WINDOW} GROUP BY args_key HAVING count() >= {min_count:UInt32}))`;
const LIVE_KEYS = "(SELECT args_key FROM {db:Identifier}.tool_invocations WHERE ingested_at > {since:DateTime64(3, 'UTC')})";
/**
 * Every call of the window whose key repeats (or may: every call of a key ingested after `since`),
 * as a subquery: the dedup index's copies (`indexed`, its column names) and the calls of the keys
 * ingested after `since` (`live`, the same columns computed from a call), each call once.
 */
export const indexedRows = (indexed: string, live: string) => `(
  SELECT ${indexed} FROM {db:Identifier}.dedup_repeats FINAL WHERE ${WINDOW}
  UNION ALL
  SELECT ${live} FROM {db:Identifier}.tool_invocations
  PREWHERE args_key IN ${LIVE_KEYS}
  WHERE ${WINDOW}
    AND call_id NOT IN (SELECT call_id FROM {db:Identifier}.dedup_repeats WHERE args_key IN ${LIVE_KEYS}))`;
// names: with each call's tool_id and args_hash, for a reader that cannot look the page's names
// up afterwards (a dashboard panel); the index holds them for its few percent of the calls.
const INDEXED_ROWS = (names: boolean) =>
  indexedRows(`${names ? 'tool_id, args_hash, ' : ''}args_key, check_key, hash_prefix, first_order, created_at, duration_ms, cost_usd`, `${names ? 'tool_id, args_hash, ' : ''}${KEYS_OF_CALL}`);

const PARAMS = {
  ...WINDOW_PARAM_DOCS,
  ...PAGE_PARAM_DOCS,
  min_count: 'smallest group size to report (≥ 2)',
  c_n: 'count of the last group of the previous page',
  c_ms: 'potential_savings_ms of the last group of the previous page',
  c_prefix: 'args_hash prefix (UInt64) of the last group of the previous page',
  c_key: 'args_key of the last group of the previous page',
};
const description = (how: string) =>
  `Groups of calls with the same tool_id and args_hash seen at least min_count times; savings = sum minus the first call (by created_at); by count, then savings, descending. ${how}`;

/** Dedup candidates in two passes over the table. */
export const DEDUP_CANDIDATES: QuerySpec = { name: 'dedup_candidates', description: description('Two passes over tool_invocations.'), sql: PAGED(BY_KEY(TWO_PASS_ROWS, true)), params: PARAMS };

/** The same, grouped by (tool_id, args_hash) itself (after an args_key collision). */
export const DEDUP_CANDIDATES_EXACT: QuerySpec = { name: 'dedup_candidates_exact', description: description('Grouped by name, not key.'), sql: PAGED(BY_NAME(TWO_PASS_ROWS)), params: PARAMS };

/** The same from dedup_repeats plus the calls of keys ingested after `since`. */
export const DEDUP_CANDIDATES_INDEXED: QuerySpec = {
  name: 'dedup_candidates_indexed',
  description: description('From the dedup index and the calls of keys ingested since `since`.'),
  sql: PAGED(BY_KEY(INDEXED_ROWS(false), false)),
  params: { ...PARAMS, since: 'the indexer watermark minus its overlap: calls of keys ingested after it come from the table' },
};

/** The same with each group's tool_id and args_hash (the dashboards' dedup candidates panel). */
export const DEDUP_CANDIDATES_INDEXED_NAMED: QuerySpec = {
  name: 'dedup_candidates_indexed_named',
  description: description('From the dedup index and the calls of keys ingested since `since`, with the names of each group.'),
  sql: PAGED(BY_KEY(INDEXED_ROWS(true), true)),
  params: DEDUP_CANDIDATES_INDEXED.params,
};

/** tool_id and args_hash of given keys. */
export const DEDUP_GROUP_NAMES: QuerySpec = {
  name: 'dedup_group_names',
  description: 'tool_id and args_hash of the given args_keys (from the dedup index, else from the calls in the window).',
  sql: `SELECT toString(args_key) AS key, any(tool_id) AS tool_id, any(args_hash) AS args_hash FROM (
  SELECT args_key, tool_id, args_hash FROM {db:Identifier}.dedup_repeats WHERE args_key IN {keys:Array(UInt64)}
  UNION ALL
  SELECT args_key, tool_id, args_hash FROM {db:Identifier}.tool_invocations WHERE args_key IN {missing:Array(UInt64)} AND ${WINDOW}
) GROUP BY args_key`,
  params: { ...WINDOW_PARAM_DOCS, keys: 'args_keys to name', missing: 'args_keys to look for in tool_invocations (not indexed yet)' },
};

/** Where the indexer stands: its watermark and how many calls were ingested after it (minus the overlap). */
export const DEDUP_INDEX_STATE: QuerySpec = {
  name: 'dedup_index_state',
  description: 'Watermark of the dedup indexer and the calls ingested since (overlap included).',
  sql: `WITH (SELECT max(watermark) FROM {db:Identifier}.dedup_progress) AS wm
SELECT toUnixTimestamp64Milli(wm) AS wm_ms, count() AS lag
FROM {db:Identifier}.tool_invocations
WHERE ingested_at > wm - toIntervalMillisecond({overlap_ms:UInt32})`,
  params: { db: WINDOW_PARAM_DOCS.db, overlap_ms: 'the indexer overlap' },
};

/** The indexed statement is used while the indexer lags by at most this many calls. */
export const DEDUP_LIVE_MAX_ROWS = 500_000;

const u64 = z.string().regex(/^\d{1,20}$/);
const cursor = cursorCodec('dedup', z.tuple([numKey, numKey, u64, u64]));

/** Parameters of {@link dedupCandidates}. */
export interface DedupParams {
  minCount: number;
  window: TimeWindow;
  limit: number;
  cursor?: string;
  /** Use the indexed statement while the indexer lags by at most this many calls (default DEDUP_LIVE_MAX_ROWS; 0 = never). */
  liveMaxRows?: number;
  /** The indexer's overlap (default DEDUP_OVERLAP_MS; tests only). */
  indexOverlapMs?: number;
}

interface DedupRow {
  tool_id: string;
  args_hash: string;
  key_text: string;
  prefix_text: string;
  count: number;
  potential_savings_ms: number;
  potential_savings_usd: number;
  first_ms: number;
  last_ms: number;
  total_groups: number;
  total_duplicate_calls: number;
  total_savings_ms: number;
  total_savings_usd: number;
  collisions: number;
}

/**
 * `since` for an indexed statement (the indexer's watermark minus its overlap), or undefined when
 * the indexer lags by more than `liveMaxRows` calls (or its tables are missing). The cache
 * simulation (cache-simulation.ts) reads the same index.
 */
export async function indexedSince(ch: StatementRunner, db: string, liveMaxRows: number, overlapMs: number, ctx: QueryContext): Promise<number | undefined> {
  if (liveMaxRows <= 0) return undefined;
  try {
    const [state] = await runQuery<{ wm_ms: number; lag: number }>(ch, DEDUP_INDEX_STATE, { db, overlap_ms: overlapMs }, ctx);
    if (!state || Number(state.lag) > liveMaxRows) return undefined;
    return Math.max(0, Number(state.wm_ms) - overlapMs);
  } catch {
    return undefined; // no dedup tables (schema not migrated): the two-pass statement needs none
  }
}

/** Runs the dedup candidates. */
export async function dedupCandidates(ch: StatementRunner, db: string, p: DedupParams, ctx: QueryContext): Promise<Dedup> {
  const after = p.cursor === undefined ? undefined : cursor.decode(p.cursor);
  const since = await indexedSince(ch, db, p.liveMaxRows ?? DEDUP_LIVE_MAX_ROWS, p.indexOverlapMs ?? DEDUP_OVERLAP_MS, ctx);
  const win = windowParams(p.window);
  const params = {
    db,
    ...win,
    min_count: p.minCount,
    has_cursor: after !== undefined,
    c_n: after?.[0] ?? 0,
    c_ms: after?.[1] ?? 0,
    c_prefix: after?.[2] ?? '0',
    c_key: after?.[3] ?? '0',
    limit: p.limit + 1,
  };
  let rows =
    since === undefined
      ? await runQuery<DedupRow>(ch, DEDUP_CANDIDATES, params, ctx)
      : await runQuery<DedupRow>(ch, DEDUP_CANDIDATES_INDEXED, { ...params, since: chTime(since) }, ctx);
  if (rows.some((r) => Number(r.collisions) > 0)) rows = await runQuery<DedupRow>(ch, DEDUP_CANDIDATES_EXACT, params, ctx);
  const page = pageOf(rows, p.limit);
  const names = new Map<string, { tool_id: string; args_hash: string }>();
  const unnamed = page.rows.filter((r) => r.args_hash === '');
  if (unnamed.length > 0) {
    const keys = unnamed.map((r) => r.key_text);
    // UInt64 keys travel as BigInt: above 2^53 a JS number would round them.
    const found = await runQuery<{ key: string; tool_id: string; args_hash: string }>(ch, DEDUP_GROUP_NAMES, { db, ...win, keys: keys.map(BigInt), missing: [] }, ctx);
    for (const f of found) names.set(f.key, f);
    const missing = keys.filter((k) => !names.has(k));
    if (missing.length > 0) {
      for (const f of await runQuery<{ key: string; tool_id: string; args_hash: string }>(ch, DEDUP_GROUP_NAMES, { db, ...win, keys: [], missing: missing.map(BigInt) }, ctx)) names.set(f.key, f);
    }
  }
  const first = rows[0];
  const last = page.rows[page.rows.length - 1];
  return {
    groups: page.rows.map((r) => ({
      tool_id: r.args_hash === '' ? (names.get(r.key_text)?.tool_id ?? '') : r.tool_id,
      args_hash: r.args_hash === '' ? (names.get(r.key_text)?.args_hash ?? '') : r.args_hash,
      count: Number(r.count),
      potential_savings_ms: Number(r.potential_savings_ms),
      potential_savings_usd: Number(r.potential_savings_usd),
      first_seen: isoTime(r.first_ms),
      last_seen: isoTime(r.last_ms),
    })),
    totals: {
      groups: Number(first?.total_groups ?? 0),
      duplicate_calls: Number(first?.total_duplicate_calls ?? 0),
      potential_savings_ms: Number(first?.total_savings_ms ?? 0),
      potential_savings_usd: Number(first?.total_savings_usd ?? 0),
    },
    next_cursor: page.more && last ? cursor.encode([Number(last.count), Number(last.potential_savings_ms), last.prefix_text, last.key_text]) : null,
  };
}
