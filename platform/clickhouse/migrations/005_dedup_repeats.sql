-- Dedup candidates at scale. Almost every (tool_id, args_hash) is unique, so finding
-- the repeated ones means grouping millions of unique keys: seconds at 10 M calls. This table
-- keeps the calls whose key occurs more than once (a few percent of all calls), maintained
-- incrementally by the read side's dedup indexer (src/queries/dedup-index.ts) from the calls
-- ingested since its watermark. Queries combine it with the calls ingested after the watermark,
-- so answers are exact whatever the indexer's lag; when it lags far, they fall back to grouping
-- the table itself.
CREATE TABLE IF NOT EXISTS {db:Identifier}.dedup_repeats
(
    args_key    UInt64,
    tool_id     LowCardinality(String),
    args_hash   FixedString(64),
    call_id     UUID,
    created_at  DateTime64(3, 'UTC'),
    duration_ms UInt64,
    cost_usd    Nullable(Float64),
    indexed_at  DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(created_at)
ORDER BY (created_at, call_id)
TTL toDateTime(created_at) + toIntervalDay({invocations_days:UInt32});

-- How far the indexer got: every call with ingested_at up to the newest watermark has been seen.
CREATE TABLE IF NOT EXISTS {db:Identifier}.dedup_progress
(
    watermark  DateTime64(3, 'UTC'),
    updated_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY updated_at
TTL toDateTime(updated_at) + toIntervalDay(7);
