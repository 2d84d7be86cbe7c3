-- Optimization hints: segment workflow_optimizations, filled by `optimization_hint`
-- packets (external producers, through the ingest pipeline) and by the hints analyzer.
-- Insert-only. One row per hint_id: the ingest writer looks hint_ids up before inserting (I1,
-- like call_id), and the analyzer derives hint_id from (kind, subject, window) and inserts only
-- the ids not yet stored. Readers still keep one row per hint_id (a retried insert beyond the
-- dedup window could store a row twice).
CREATE TABLE IF NOT EXISTS {db:Identifier}.workflow_optimizations
(
    hint_id               UUID,
    kind                  Enum8('cache_candidate' = 1, 'bundle_candidate' = 2, 'retry_storm' = 3),
    tool_ids              Array(LowCardinality(String)) COMMENT 'the tool, or the sequence in call order (bundle_candidate)',
    task_ids_sample       Array(String),
    evidence              String COMMENT 'JSON object, kind-specific' CODEC(ZSTD(3)),
    estimated_savings_ms  UInt64,
    estimated_savings_usd Float64,
    window_from           DateTime64(3, 'UTC'),
    window_to             DateTime64(3, 'UTC'),
    created_at            DateTime64(3, 'UTC'),
    origin                Enum8('producer' = 1, 'analyzer' = 2),
    fingerprint           FixedString(32) COMMENT 'hash of every field: identical redelivery vs hint_id reuse',
    source                String COMMENT 'kafka:topic/partition@offset, http:request#index, or analyzer',
    ingested_at           DateTime64(3, 'UTC') DEFAULT now64(3),
    INDEX idx_hint_id hint_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(created_at)
ORDER BY (created_at, hint_id)
TTL toDateTime(created_at) + toIntervalDay({workflows_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000;
