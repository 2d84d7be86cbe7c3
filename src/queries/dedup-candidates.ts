/**
 * Dedup candidates (SPEC §5, GET /v1/dedup/candidates?min_count=2): calls repeated with identical
 * args (same tool_id and args_hash) in the window, and what the repeats beyond the first cost.
 *
 * Two passes, because almost every (tool_id, args_hash) is unique: grouping millions of unique
 * 64-character keys is what makes the naive query slow. The first pass groups the 8-byte
 * `args_key` (cityHash64 of both, migration 002) to find the keys seen at least min_count times;
 * the second groups exactly by (tool_id, args_hash), only the calls of those keys. A hash
 * collision can only add a candidate key, which the exact HAVING then drops.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { z } from 'zod';
import { cursorCodec, numKey, strKey } from './cursor.ts';
import type { Dedup } from './schemas.ts';
import { isoTime, PAGE_PARAM_DOCS, pageOf, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow } from './sql.ts';

// "First" call of a group: earliest created_at; calls in the same millisecond are ordered by a
// hash of call_id, so a group's savings never change between two requests (stable pages).
const FIRST = '(toUInt64(toUnixTimestamp64Milli(created_at)) * 65536 + cityHash64(call_id) % 65536)';

/** Groups with their savings and, on every row, the totals over all groups. */
export const DEDUP_CANDIDATES: QuerySpec = {
  name: 'dedup_candidates',
  description:
    'Groups of calls with the same tool_id and args_hash seen at least min_count times; savings = sum minus the first call (by created_at). Ordered by count, then savings_ms, descending.',
  sql: `SELECT tool_id, args_hash, calls AS count, potential_savings_ms, potential_savings_usd, first_ms, last_ms,
       total_groups, total_duplicate_calls, total_savings_ms, total_savings_usd
FROM (
  SELECT *,
    count() OVER () AS total_groups,
    sum(calls) OVER () - count() OVER () AS total_duplicate_calls,
    sum(potential_savings_ms) OVER () AS total_savings_ms,
    sum(potential_savings_usd) OVER () AS total_savings_usd
  FROM (
    SELECT tool_id, args_hash, count() AS calls,
      sum(duration_ms) - argMin(duration_ms, ${FIRST}) AS potential_savings_ms,
      sum(ifNull(cost_usd, 0)) - argMin(ifNull(cost_usd, 0), ${FIRST}) AS potential_savings_usd,
      toUnixTimestamp64Milli(min(created_at)) AS first_ms,
      toUnixTimestamp64Milli(max(created_at)) AS last_ms
    FROM {db:Identifier}.tool_invocations
    WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
      AND args_key IN (
        SELECT args_key FROM {db:Identifier}.tool_invocations
        WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
        GROUP BY args_key
        HAVING count() >= {min_count:UInt32})
    GROUP BY tool_id, args_hash
    HAVING calls >= {min_count:UInt32}
  )
)
WHERE NOT {has_cursor:Bool}
   OR calls < {c_n:UInt64}
   OR (calls = {c_n:UInt64} AND (potential_savings_ms < {c_ms:UInt64}
       OR (potential_savings_ms = {c_ms:UInt64} AND (tool_id, args_hash) > ({c_tool:String}, {c_hash:String}))))
ORDER BY calls DESC, potential_savings_ms DESC, tool_id, args_hash
LIMIT {limit:UInt32}`,
  params: {
    ...WINDOW_PARAM_DOCS,
    ...PAGE_PARAM_DOCS,
    min_count: 'smallest group size to report (≥ 2)',
    c_n: 'count of the last group of the previous page',
    c_ms: 'potential_savings_ms of the last group of the previous page',
    c_tool: 'tool_id of the last group of the previous page',
    c_hash: 'args_hash of the last group of the previous page',
  },
};

const cursor = cursorCodec('dedup', z.tuple([numKey, numKey, strKey, strKey]));

/** Parameters of {@link dedupCandidates}. */
export interface DedupParams {
  minCount: number;
  window: TimeWindow;
  limit: number;
  cursor?: string;
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
}

/** Runs the dedup candidates. */
export async function dedupCandidates(ch: ClickHouseClient, db: string, p: DedupParams, ctx: QueryContext): Promise<Dedup> {
  const after = p.cursor === undefined ? undefined : cursor.decode(p.cursor);
  const rows = await runQuery<DedupRow>(
    ch,
    DEDUP_CANDIDATES,
    {
      db,
      ...windowParams(p.window),
      min_count: p.minCount,
      has_cursor: after !== undefined,
      c_n: after?.[0] ?? 0,
      c_ms: after?.[1] ?? 0,
      c_tool: after?.[2] ?? '',
      c_hash: after?.[3] ?? '',
      limit: p.limit + 1,
    },
    ctx,
  );
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
