-- Model turns: segment model_turns, filled by `model_turn` packets (emitters, and the model spans
-- of OTLP traces). Insert-only. One row per turn_id: the ingest writer looks turn_ids up before
-- inserting (I1, like call_id), so a re-exported span adds nothing. Read by task (the task view
-- shows each turn between the calls it asked for) and by time (model cost beside tool cost), so
-- ordered by task like the calls, with a projection by time; the bloom filter serves the writer's
-- look-up by id.
CREATE TABLE IF NOT EXISTS {db:Identifier}.model_turns
(
    turn_id               UUID,
    task_id               String,
    agent_id              LowCardinality(String),
    model                 LowCardinality(String),
    provider              LowCardinality(Nullable(String)),
    input_tokens          Nullable(UInt64),
    output_tokens         Nullable(UInt64),
    cached_input_tokens   Nullable(UInt64),
    cost_usd              Nullable(Float64),
    cost_source           LowCardinality(Nullable(String)) COMMENT 'reported, or price_table',
    duration_ms           UInt64,
    status                Enum8('success' = 1, 'error' = 2),
    error                 Nullable(String) CODEC(ZSTD(3)),
    requested_tool_calls  String COMMENT 'JSON array of {id, tool_id}, in the order the model asked' CODEC(ZSTD(3)),
    trace_id              String,
    span_id               String,
    created_at            DateTime64(3, 'UTC'),
    fingerprint           FixedString(32) COMMENT 'hash of every field: identical redelivery vs turn_id reuse',
    source                String COMMENT 'kafka:topic/partition@offset or http:request#index',
    ingested_at           DateTime64(3, 'UTC') DEFAULT now64(3),
    INDEX idx_turn_id turn_id TYPE bloom_filter(0.001) GRANULARITY 1,
    -- Model cost by time (GET /v1/cost/models): a range read of the window, as the calls' by_created.
    PROJECTION by_created (SELECT created_at, agent_id, model, provider, input_tokens, output_tokens, cached_input_tokens, cost_usd ORDER BY created_at)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(created_at)
ORDER BY (task_id, created_at, turn_id)
TTL toDateTime(created_at) + toIntervalDay({invocations_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000,
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
