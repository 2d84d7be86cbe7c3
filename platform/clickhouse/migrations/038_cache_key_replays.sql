-- Each repeated key's cache replay kept by the dedup indexer. The cache simulation
-- replayed every repeated key of the window on each read: at 30 M calls, merging 120 k keys'
-- arrays (1.8 M calls) and folding them was ~0.5 s of the statement's ~0.6 s alone, and its p95
-- beside the catching-up jobs 1.3 s. The indexer now replays a key once its calls change and keeps
-- the result here; reads take it for every key whose replay is still true (cache-simulation.ts)
-- and replay only the others.
--
-- When a key's calls were last copied: cache_key_calls.copied_at, the newest indexed_at of the
-- copies it holds (dedup_repeats' own column). Rows copied before this migration keep the
-- default (1970), so every replay, all made after it, is newer.
ALTER TABLE {db:Identifier}.cache_key_calls ADD COLUMN IF NOT EXISTS copied_at SimpleAggregateFunction(max, DateTime64(3, 'UTC')) AFTER last_at;

ALTER TABLE {db:Identifier}.cache_key_calls_mv MODIFY QUERY
SELECT tool_id, args_key, check_key, toStartOfMonth(created_at) AS month, max(created_at) AS last_at, max(indexed_at) AS copied_at,
       groupArrayState((toUnixTimestamp64Milli(created_at), UUIDToNum(call_id), succeeded, duration_ms, ifNull(cost_usd, 0))) AS calls
FROM {db:Identifier}.dedup_repeats
GROUP BY tool_id, args_key, check_key, month;

-- One replay of one key at one TTL (its tool's manifest TTL when replayed): the hits and savings
-- of all its indexed calls, which span [first_at, last_at]. A newer replay of the key replaces it.
-- A read takes it when it is at the TTL simulated, its calls lie in the window, and it was made
-- at least the indexer's overlap after the key's last copy (a copy may commit that late:
-- analyzers/cache-replays.ts). Most keys never hit (95 % in bench:history): with no hit in all its
-- calls a key has none in any window either, so such a replay keeps first_at and last_at at 0
-- (any window) and costs little more than its args_key. A key is (tool_id, args_key) here: an
-- args_key shared by two keys (told apart by check_key in cache_key_calls) is never replayed.
CREATE TABLE IF NOT EXISTS {db:Identifier}.cache_key_replays
(
    tool_id     LowCardinality(String),
    args_key    UInt64 CODEC(Delta, ZSTD(1)),
    ttl_ms      Int64 CODEC(T64, ZSTD(1)),
    first_at    DateTime64(3, 'UTC'),
    last_at     DateTime64(3, 'UTC'),
    hits        UInt64 CODEC(T64, ZSTD(1)),
    saved_ms    UInt64 CODEC(T64, ZSTD(1)),
    saved_usd   Float64,
    replayed_at DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1))
)
ENGINE = ReplacingMergeTree(replayed_at)
ORDER BY (tool_id, args_key)
-- A zero-hit replay's last_at is 0: it lives as long as the newest replay of a key with hits; a
-- replay of a key gone from cache_key_calls is never read.
TTL toDateTime(replayed_at) + toIntervalDay({invocations_days:UInt32})
-- Part cleanup as every table's (migration 016).
SETTINGS old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1, default_compression_codec = 'ZSTD(1)';
