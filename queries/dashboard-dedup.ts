/**
 * Dedup & cache panels beyond the API's Dedup and BySampleHash views (dedup-candidates.ts,
 * identical-outputs.ts): repeats over time, and what identical outputs store more than once.
 */
import { bucketOf, CREATED_IN_WINDOW, PARAM_DOCS } from './dashboard-common.ts';
import { DEDUP_CANDIDATES_INDEXED, indexedRows } from './dedup-candidates.ts';
import type { QuerySpec } from './sql.ts';

const WINDOW_PARAMS = { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to };
const MIN_COUNT = 'groups with at least this many outputs (≥ 2)';

/** Repeats over time. */
export const REPEATS_OVER_TIME: QuerySpec = {
  name: 'repeats_over_time',
  description:
    'Per time bucket: calls that repeated an earlier call of the window with the same (tool_id, args_hash), and what they cost (cache hits a cache would have served). From the dedup index and the calls of keys ingested since `since`.',
  // Only calls whose key repeats can be repeats: those the dedup index copied, and the calls of
  // keys ingested after its watermark (dedup-candidates.ts), a few percent of the window's calls.
  // A key is its two 64-bit hashes of (tool_id, args_hash): args_hash is the SHA-256 of the
  // canonical args (I5), so calls with the same tool and args share it.
  sql: `SELECT ${bucketOf('created_at')} AS time, count() AS repeated_calls, sum(ifNull(cost_usd, 0)) AS repeated_cost_usd
FROM (
  SELECT created_at, cost_usd, row_number() OVER (PARTITION BY args_key, check_key ORDER BY created_at, call_id) AS nth
  FROM ${indexedRows('args_key, check_key, call_id, created_at, cost_usd', 'args_key, sipHash64(tool_id, args_hash) AS check_key, call_id, created_at, cost_usd')}
)
WHERE nth > 1
GROUP BY time
ORDER BY time`,
  params: { ...WINDOW_PARAMS, bucket_s: PARAM_DOCS.bucket_s, since: DEDUP_CANDIDATES_INDEXED.params.since as string },
};

/** What identical outputs store more than once. */
export const IDENTICAL_OUTPUT_CONTENTS: QuerySpec = {
  name: 'identical_output_contents',
  description: 'The groups of identical outputs (same tool and content_hash, at least min_count): size, bytes stored more than once, content type, a sample and the first calls that produced them, most repeated first.',
  // The page's groups are chosen by counting alone (the API's identical outputs); only their rows
  // are then read again for the rest, by the table's key (tool_id, content_hash): collecting every
  // group's calls first, almost all of them single outputs, cost ~3× more at 10 M.
  sql: `SELECT
  content_hash,
  toString(tool_id) AS tool_id,
  count() AS n,
  arrayStringConcat(arraySlice(arrayMap(x -> toString(x.2), arraySort(groupArray((created_at, call_id)))), 1, 10), ', ') AS first_call_ids,
  any(size_bytes) AS bytes,
  (count() - 1) * bytes AS repeated_bytes,
  any(content_type) AS content_type,
  any(sample) AS sample
FROM {db:Identifier}.tool_outputs
WHERE ${CREATED_IN_WINDOW}
  AND (tool_id, content_hash) IN (
    SELECT tool_id, content_hash FROM {db:Identifier}.tool_outputs
    WHERE ${CREATED_IN_WINDOW}
    GROUP BY tool_id, content_hash
    HAVING count() >= {min_count:UInt32}
    ORDER BY count() DESC, content_hash, tool_id
    LIMIT {limit:UInt32})
GROUP BY tool_id, content_hash
ORDER BY n DESC, content_hash, tool_id
LIMIT {limit:UInt32}`,
  params: { ...WINDOW_PARAMS, min_count: MIN_COUNT, limit: PARAM_DOCS.limit },
};
