-- tool-audit segments (SPEC §1). Insert-only: rows are never updated or deleted except by TTL.
-- Parameters: {db:Identifier} and the retention days; applied by `tool-audit migrate`.

CREATE DATABASE IF NOT EXISTS {db:Identifier};

-- One task's calls are a primary-key range (ORDER BY task_id, created_at); per-tool reads use
-- the by_tool projection; call_id lookups (I1, outputs → calls) use the bloom filter.
CREATE TABLE IF NOT EXISTS {db:Identifier}.tool_invocations
(
    call_id        UUID,
    task_id        String COMMENT 'empty string = no task (null in the API)',
    tool_id        LowCardinality(String),
    agent_id       LowCardinality(String),
    orchestrator   Enum8('websocket' = 1, 'kernel' = 2, 'gateway' = 3, 'scheduler' = 4),
    instance_id    LowCardinality(String),
    args           String COMMENT 'canonical JSON of SPEC §2: sha256(args) = args_hash' CODEC(ZSTD(3)),
    args_hash      FixedString(64),
    status         Enum8('success' = 1, 'timeout' = 2, 'error' = 3, 'rate_limited' = 4, 'invalid_input' = 5),
    duration_ms    UInt64,
    result_summary String CODEC(ZSTD(3)),
    error          Nullable(String),
    cost_usd       Nullable(Float64),
    tokens_used    Nullable(String),
    created_at     DateTime64(3, 'UTC'),
    fingerprint    FixedString(32) COMMENT 'hash of every field: identical redelivery vs call_id reuse (I1)',
    source         String COMMENT 'kafka:topic/partition@offset or http:request#index',
    ingested_at    DateTime64(3, 'UTC') DEFAULT now64(3),
    INDEX idx_call_id call_id TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_agent agent_id TYPE set(256) GRANULARITY 4,
    INDEX idx_args_hash args_hash TYPE bloom_filter(0.01) GRANULARITY 4,
    PROJECTION by_tool (SELECT * ORDER BY tool_id, created_at)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(created_at)
ORDER BY (task_id, created_at, call_id)
TTL toDateTime(created_at) + toIntervalDay({invocations_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000, ttl_only_drop_parts = 0;

CREATE TABLE IF NOT EXISTS {db:Identifier}.tool_outputs
(
    output_id    UUID,
    call_id      UUID,
    tool_id      LowCardinality(String),
    content_type Enum8('json' = 1, 'csv' = 2, 'text' = 3, 'image_id' = 4, 'chart_id' = 5, 'code' = 6, 'html' = 7),
    content_hash FixedString(64),
    size_bytes   UInt64,
    sample       Nullable(String),
    created_at   DateTime64(3, 'UTC'),
    fingerprint  FixedString(32),
    source       String,
    ingested_at  DateTime64(3, 'UTC') DEFAULT now64(3),
    INDEX idx_call_id call_id TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_output_id output_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(created_at)
ORDER BY (tool_id, content_hash, created_at, output_id)
TTL toDateTime(created_at) + toIntervalDay({outputs_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000;

-- Output content is stored once per content_hash; a hash seen again refreshes last_seen at
-- most daily, and merges keep the newest row, so retention follows the newest output using it.
CREATE TABLE IF NOT EXISTS {db:Identifier}.output_contents
(
    content_hash FixedString(64),
    content_type Enum8('json' = 1, 'csv' = 2, 'text' = 3, 'image_id' = 4, 'chart_id' = 5, 'code' = 6, 'html' = 7),
    content      String CODEC(ZSTD(3)),
    size_bytes   UInt64,
    last_seen    DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(last_seen)
ORDER BY content_hash
TTL toDateTime(last_seen) + toIntervalDay({outputs_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS {db:Identifier}.tool_workflows
(
    task_id            String,
    preceding_call_id  UUID,
    succeeding_call_id UUID,
    preceding_tool_id  LowCardinality(String),
    succeeding_tool_id LowCardinality(String),
    time_delta_ms      UInt32,
    data_flow          Nullable(String),
    origin             Enum8('emitted' = 1, 'analyzer' = 2),
    fingerprint        FixedString(32),
    source             String,
    ingested_at        DateTime64(3, 'UTC') DEFAULT now64(3),
    INDEX idx_succ succeeding_call_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(ingested_at)
ORDER BY (task_id, preceding_call_id, succeeding_call_id)
TTL toDateTime(ingested_at) + toIntervalDay({workflows_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000;

-- Packets that broke a MUST rule: reason, exact bytes and origin, for replay after a fix.
CREATE TABLE IF NOT EXISTS {db:Identifier}.quarantine
(
    source_key   String,
    source_kind  Enum8('kafka' = 1, 'http' = 2),
    topic        String,
    partition    Int32,
    offset       Int64,
    request_id   String,
    packet_type  LowCardinality(String),
    reason_code  LowCardinality(String),
    reason       String,
    ids          Array(String),
    raw          String CODEC(ZSTD(3)),
    received_at  DateTime64(3, 'UTC') DEFAULT now64(3),
    INDEX idx_source source_key TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(received_at)
ORDER BY (received_at, source_key)
TTL toDateTime(received_at) + toIntervalDay({quarantine_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000;

-- SHOULD and cross-segment rules found by the auditor, each recorded once (violation_key).
CREATE TABLE IF NOT EXISTS {db:Identifier}.violations
(
    violation_key String,
    invariant     LowCardinality(String),
    packet_type   LowCardinality(String),
    ids           Array(String),
    detail        String,
    detected_at   DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(detected_at)
ORDER BY (invariant, detected_at, violation_key)
TTL toDateTime(detected_at) + toIntervalDay({quarantine_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000;
