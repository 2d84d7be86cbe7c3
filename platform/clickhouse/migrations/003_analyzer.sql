-- Dependency analyzer and auditor: progress watermarks, and indexes for their incremental scans.

CREATE TABLE IF NOT EXISTS {db:Identifier}.analyzer_progress
(
    name       LowCardinality(String),
    watermark  DateTime64(3, 'UTC') COMMENT 'ingested_at up to which the job is done',
    updated_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY (name, watermark)
TTL toDateTime(updated_at) + toIntervalDay(7);

-- New rows are found by ingested_at; parts are written in time order, so min/max prune well.
ALTER TABLE {db:Identifier}.tool_invocations ADD INDEX IF NOT EXISTS idx_ingested_at ingested_at TYPE minmax GRANULARITY 1;
ALTER TABLE {db:Identifier}.tool_outputs ADD INDEX IF NOT EXISTS idx_ingested_at ingested_at TYPE minmax GRANULARITY 1;
ALTER TABLE {db:Identifier}.tool_workflows ADD INDEX IF NOT EXISTS idx_ingested_at ingested_at TYPE minmax GRANULARITY 1;
ALTER TABLE {db:Identifier}.violations ADD INDEX IF NOT EXISTS idx_violation_key violation_key TYPE bloom_filter(0.001) GRANULARITY 1;
