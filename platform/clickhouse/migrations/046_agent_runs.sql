-- Agent runs: segment agent_runs, filled by `agent_run` packets (the agent spans of OTLP traces:
-- GenAI invoke_agent, OpenInference AGENT and a trace's root CHAIN, OpenLLMetry agent/workflow,
-- the AI SDK's generateText/streamText). Insert-only. One row per run_id: the ingest writer looks
-- run_ids up before inserting (I1), so a re-exported span adds nothing. A run gives its task a
-- name and an agent; read by task (the task view, the task list's names), so ordered by task like
-- the calls. The bloom filter serves the writer's look-up by id; the min/max index on ingested_at
-- serves the audit log builder, which reads each step's runs by storage time.
CREATE TABLE IF NOT EXISTS {db:Identifier}.agent_runs
(
    run_id          UUID,
    task_id         String,
    agent_id        LowCardinality(String),
    name            String,
    duration_ms     UInt64,
    status          Enum8('success' = 1, 'error' = 2),
    error           Nullable(String) CODEC(ZSTD(3)),
    trace_id        String,
    span_id         String,
    parent_span_id  String COMMENT 'the span the run was started under; empty at a trace root',
    created_at      DateTime64(3, 'UTC') COMMENT 'when the run ended',
    fingerprint     FixedString(32) COMMENT 'hash of every field: identical redelivery vs run_id reuse',
    source          String COMMENT 'kafka:topic/partition@offset or http:request#index',
    ingested_at     DateTime64(3, 'UTC') DEFAULT now64(3),
    INDEX idx_run_id run_id TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX stored_range ingested_at TYPE minmax GRANULARITY 1
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(created_at)
ORDER BY (task_id, created_at, run_id)
TTL toDateTime(created_at) + toIntervalDay({invocations_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000,
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
