-- The cache simulation at scale. Its replay needs, per (tool_id, args_hash) that
-- repeats, that key's calls in order. Found at read time that is two passes over every call of the
-- window: at 30 M calls, 1.5 s to find the 120 k repeated keys among 15 M calls of cacheable tools
-- and 2.2 s to gather their 1.8 M calls, with nothing else running. The dedup indexer already finds
-- the repeated keys and copies their calls into dedup_repeats (migration 005); this view keeps
-- those calls grouped per key, as arrays, as they are copied: the replay then reads ~120 k rows
-- (0.2 s at 30 M, ~2 bytes per call). Queries add the keys ingested after the indexer's
-- watermark from the calls themselves, so answers are exact at any lag (cache-simulation.ts).
--
-- The replay needs each call's outcome (only a successful miss creates an entry): dedup_repeats
-- gets it. Its rows copied before this migration do not have it, so the index starts over: the
-- indexer copies every repeated call again (a 10 M-call store: ~2 min), and until it has caught up
-- the dedup and cache reads run their two-pass statements, exact as before.
ALTER TABLE {db:Identifier}.dedup_repeats ADD COLUMN IF NOT EXISTS succeeded UInt8 DEFAULT 0 AFTER cost_usd;
TRUNCATE TABLE {db:Identifier}.dedup_repeats;
TRUNCATE TABLE {db:Identifier}.dedup_progress;

-- One row per key, month and insert until parts merge (readers merge a key's states across
-- rows). Each element is one call: (created_at in ms, call_id as 16 big-endian bytes, which sort
-- like its text, succeeded, duration_ms, cost_usd with null as 0). check_key (a second 64-bit
-- hash) keeps two keys whose args_key collide apart. A call copied twice (two indexers at once) is
-- the same element twice: readers take distinct elements. A key's calls are kept per month of
-- created_at, and a month's row lives as long as its newest call: a key called every minute for
-- years still drops its old calls with retention, and no array grows past a month of one key.
CREATE TABLE IF NOT EXISTS {db:Identifier}.cache_key_calls
(
    tool_id   LowCardinality(String),
    args_key  UInt64,
    check_key UInt64,
    month     Date,
    last_at   SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
    calls     AggregateFunction(groupArray, Tuple(Int64, FixedString(16), UInt8, UInt64, Float64))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(month)
ORDER BY (tool_id, args_key, check_key, month)
TTL toDateTime(last_at) + toIntervalDay({invocations_days:UInt32})
-- Part cleanup as every table's (migration 016).
SETTINGS old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.cache_key_calls_mv TO {db:Identifier}.cache_key_calls AS
SELECT tool_id, args_key, check_key, toStartOfMonth(created_at) AS month, max(created_at) AS last_at,
       groupArrayState((toUnixTimestamp64Milli(created_at), UUIDToNum(call_id), succeeded, duration_ms, ifNull(cost_usd, 0))) AS calls
FROM {db:Identifier}.dedup_repeats
GROUP BY tool_id, args_key, check_key, month;
