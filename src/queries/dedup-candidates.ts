/**
 * Dedup candidates (SPEC §5, GET /v1/dedup/candidates?min_count=2): calls repeated with identical
 * args (same tool_id and args_hash) in the window, and what the repeats beyond the first cost.
 *
 * Almost every (tool_id, args_hash) is unique, and grouping millions of unique keys is what makes
 * the naive query slow. Two statements, both exact:
 *  - DEDUP_CANDIDATES_INDEXED groups only the calls of repeated keys: those the dedup indexer has
 *    copied into dedup_repeats (migration 005, dedup-index.ts), plus every call of any key seen
 *    among the calls ingested after the indexer's watermark (minus an overlap). A key that repeats
 *    has either all its calls indexed or a call after the watermark, whose key brings them all.
 *  - DEDUP_CANDIDATES (when the indexer lags by more than dedupLiveMaxRows calls, or never ran on
 *    a large table) takes two passes over the table: the 8-byte `args_key` (cityHash64 of both,
 *    migration 002) finds the keys seen at least min_count times, then the calls of those keys are
 *    grouped exactly by (tool_id, args_hash); a hash collision only adds a candidate that the
 *    exact HAVING drops.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { z } from 'zod';
import { cursorCodec, numKey, strKey } from './cursor.ts';
import type { Dedup } from './schemas.ts';
import { DEDUP_OVERLAP_MS } from './dedup-index.ts';
import { chTime, isoTime, PAGE_PARAM_DOCS, pageOf, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow } from './sql.ts';

// "First" call of a group: earliest created_at; calls in the same millisecond are ordered by a
// hash of call_id, so a group's savings never change between two requests (stable pages).
const FIRST = '(toUInt64(toUnixTimestamp64Milli(created_at)) * 65536 + cityHash64(call_id) % 65536)';

const AGGREGATES = `count() AS calls,
      sum(duration_ms) - argMin(duration_ms, ${FIRST}) AS potential_savings_ms,
      sum(ifNull(cost_usd, 0)) - argMin(ifNull(cost_usd, 0), ${FIRST}) AS potential_savings_usd,
      toUnixTimestamp64Milli(min(created_at)) AS first_ms,
      toUnixTimestamp64Milli(max(created_at)) AS last_ms`;

// Exact groups: by (tool_id, args_hash) itself.
const GROUPS_OF = (rows: string) => `SELECT tool_id, args_hash, ${AGGREGATES}, 0 AS collided
    FROM ${rows}
    GROUP BY tool_id, args_hash
    HAVING calls >= {min_count:UInt32}`;

// Groups by the 8-byte args_key: 5x cheaper than hashing 64-character keys. A group whose calls
// do not all share one (tool_id, args_hash) is a cityHash64 collision: flagged, and the answer is
// then recomputed exactly (dedupCandidates), so the result never depends on luck.
const GROUPS_BY_KEY = (rows: string) => `SELECT g_tool AS tool_id, g_hash AS args_hash, calls, potential_savings_ms, potential_savings_usd, first_ms, last_ms, collided
    FROM (
      SELECT any(tool_id) AS g_tool, any(args_hash) AS g_hash, ${AGGREGATES},
        min(args_hash) != max(args_hash) OR min(tool_id) != max(tool_id) AS collided
      FROM ${rows}
      GROUP BY args_key
      HAVING calls >= {min_count:UInt32}
    )`;

// Totals over every group (window functions, before the page is cut), then the page.
const PAGED = (groups: string) => `SELECT tool_id, args_hash, calls AS count, potential_savings_ms, potential_savings_usd, first_ms, last_ms,
       total_groups, total_duplicate_calls, total_savings_ms, total_savings_usd, collisions
FROM (
  SELECT *,
    count() OVER () AS total_groups,
    sum(calls) OVER () - count() OVER () AS total_duplicate_calls,
    sum(potential_savings_ms) OVER () AS total_savings_ms,
    sum(potential_savings_usd) OVER () AS total_savings_usd,
    max(collided) OVER () AS collisions
  FROM (
    ${groups}
  )
)
WHERE NOT {has_cursor:Bool}
   OR calls < {c_n:UInt64}
   OR (calls = {c_n:UInt64} AND (potential_savings_ms < {c_ms:UInt64}
       OR (potential_savings_ms = {c_ms:UInt64} AND (tool_id, args_hash) > ({c_tool:String}, {c_hash:String}))))
ORDER BY calls DESC, potential_savings_ms DESC, tool_id, args_hash
LIMIT {limit:UInt32}`;

const WINDOW = "created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}";
const PARAMS = {
  ...WINDOW_PARAM_DOCS,
  ...PAGE_PARAM_DOCS,
  min_count: 'smallest group size to report (≥ 2)',
  c_n: 'count of the last group of the previous page',
  c_ms: 'potential_savings_ms of the last group of the previous page',
  c_tool: 'tool_id of the last group of the previous page',
  c_hash: 'args_hash of the last group of the previous page',
};

// Two passes over the table: the keys seen at least min_count times, then their calls.
const TWO_PASS_ROWS = `{db:Identifier}.tool_invocations
    WHERE ${WINDOW}
      AND args_key IN (
        SELECT args_key FROM {db:Identifier}.tool_invocations
        WHERE ${WINDOW}
        GROUP BY args_key
        HAVING count() >= {min_count:UInt32})`;

/** Groups with their savings and, on every row, the totals over all groups (two passes over the table). */
export const DEDUP_CANDIDATES: QuerySpec = {
  name: 'dedup_candidates',
  description:
    'Groups of calls with the same tool_id and args_hash seen at least min_count times; savings = sum minus the first call (by created_at). Ordered by count, then savings_ms, descending.',
  sql: PAGED(GROUPS_BY_KEY(TWO_PASS_ROWS)),
  params: PARAMS,
};

/** DEDUP_CANDIDATES grouped by (tool_id, args_hash) itself: used when an args_key collision is flagged. */
export const DEDUP_CANDIDATES_EXACT: QuerySpec = {
  name: 'dedup_candidates_exact',
  description: 'DEDUP_CANDIDATES with groups keyed by (tool_id, args_hash) rather than args_key.',
  sql: PAGED(GROUPS_OF(TWO_PASS_ROWS)),
  params: PARAMS,
};

// Calls ingested after the indexer's watermark (minus its overlap) bring every call of their key.
const LIVE_KEYS = "(SELECT args_key FROM {db:Identifier}.tool_invocations WHERE ingested_at > {since:DateTime64(3, 'UTC')})";

/** The same answer from dedup_repeats plus the calls of keys seen after the indexer's watermark. */
export const DEDUP_CANDIDATES_INDEXED: QuerySpec = {
  name: 'dedup_candidates_indexed',
  description: 'DEDUP_CANDIDATES computed from the dedup index (dedup_repeats) and the calls of keys ingested since `since`.',
  sql: PAGED(
    GROUPS_BY_KEY(`(
      SELECT args_key, tool_id, args_hash, call_id, created_at, duration_ms, cost_usd
      FROM {db:Identifier}.dedup_repeats FINAL
      WHERE ${WINDOW}
      UNION ALL
      SELECT args_key, tool_id, args_hash, call_id, created_at, duration_ms, cost_usd
      FROM {db:Identifier}.tool_invocations
      WHERE ${WINDOW}
        AND args_key IN ${LIVE_KEYS}
        AND call_id NOT IN (SELECT call_id FROM {db:Identifier}.dedup_repeats WHERE args_key IN ${LIVE_KEYS})
    )`),
  ),
  params: { ...PARAMS, since: 'the indexer watermark minus its overlap: calls ingested after it are read from the table' },
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

const cursor = cursorCodec('dedup', z.tuple([numKey, numKey, strKey, strKey]));

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

/** `since` for the indexed statement, or undefined when the indexer lags too far (or is missing). */
async function indexedSince(ch: ClickHouseClient, db: string, liveMaxRows: number, overlapMs: number, ctx: QueryContext): Promise<number | undefined> {
  if (liveMaxRows <= 0) return undefined;
  try {
    const [state] = await runQuery<{ wm_ms: number; lag: number }>(ch, DEDUP_INDEX_STATE, { db, overlap_ms: overlapMs }, ctx);
    if (!state || Number(state.lag) > liveMaxRows) return undefined;
    return Math.max(0, Number(state.wm_ms) - overlapMs);
  } catch {
    return undefined; // no dedup tables (schema not migrated): the two-pass statement needs none
  }
}

interface DedupRow {
  tool_id: string;
  args_hash: string;
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

/** Runs the dedup candidates. */
export async function dedupCandidates(ch: ClickHouseClient, db: string, p: DedupParams, ctx: QueryContext): Promise<Dedup> {
  const after = p.cursor === undefined ? undefined : cursor.decode(p.cursor);
  const since = await indexedSince(ch, db, p.liveMaxRows ?? DEDUP_LIVE_MAX_ROWS, p.indexOverlapMs ?? DEDUP_OVERLAP_MS, ctx);
  const params = {
    db,
    ...windowParams(p.window),
    min_count: p.minCount,
    has_cursor: after !== undefined,
    c_n: after?.[0] ?? 0,
    c_ms: after?.[1] ?? 0,
    c_tool: after?.[2] ?? '',
    c_hash: after?.[3] ?? '',
    limit: p.limit + 1,
  };
  let rows = await runQuery<DedupRow>(ch, since === undefined ? DEDUP_CANDIDATES : DEDUP_CANDIDATES_INDEXED, since === undefined ? params : { ...params, since: chTime(since) }, ctx);
  // A 64-bit key collision among repeated keys (odds ~1e-9 at 10 M calls): answer exactly instead.
  if (rows.some((r) => Number(r.collisions) > 0)) rows = await runQuery<DedupRow>(ch, DEDUP_CANDIDATES_EXACT, params, ctx);
  const page = pageOf(rows, p.limit);
  const first = rows[0];
  const last = page.rows[page.rows.length - 1];
  return {
    groups: page.rows.map((r) => ({
      tool_id: r.tool_id,
      args_hash: r.args_hash,
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
    next_cursor:
      page.more && last ? cursor.encode([Number(last.count), Number(last.potential_savings_ms), last.tool_id, last.args_hash]) : null,
  };
}
