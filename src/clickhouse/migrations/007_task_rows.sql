-- Task view (issue 5): one task's calls, dependencies and outputs in one primary-key range.
--
-- Reading a task from the segments takes three statements over ~25 columns of three tables, and
-- the outputs are random call_id look-ups (one granule each); at 10 M calls that is ~50 ms. Here
-- every row of a task is kept once more, as the JSON of the columns the API returns, sorted by
-- task: the whole view is one range read of two columns. Rows arrive through materialized views,
-- so every insert path (ingest, analyzer, replays) feeds it; it is derived data, never written
-- by hand, and a row may appear twice (an insert retried past deduplication): readers keep one
-- per id.

-- The task of an output: outputs carry no task_id, so the ingest writer stamps the task of the
-- output's call when it knows it (the call in the same round, or one it wrote recently). '' =
-- not known at ingest (the output arrived before its call, or at another worker): such outputs
-- are listed in orphan_outputs by call_id, a small table the task view checks the task's calls
-- against.
ALTER TABLE {db:Identifier}.tool_outputs
    ADD COLUMN IF NOT EXISTS task_id String DEFAULT '' COMMENT 'task of the call, stamped at ingest when known; empty = unknown'
    AFTER call_id;

CREATE TABLE IF NOT EXISTS {db:Identifier}.orphan_outputs
(
    call_id    UUID,
    output_id  UUID,
    created_at DateTime64(3, 'UTC')
)
ENGINE = MergeTree
ORDER BY call_id
TTL toDateTime(created_at) + toIntervalDay({outputs_days:UInt32})
SETTINGS index_granularity = 1024, non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.orphan_outputs_mv TO {db:Identifier}.orphan_outputs AS
SELECT call_id, output_id, created_at FROM {db:Identifier}.tool_outputs WHERE task_id = '';

CREATE TABLE IF NOT EXISTS {db:Identifier}.task_rows
(
    task_id     String,
    kind        Enum8('call' = 1, 'dependency' = 2, 'output' = 3),
    ts          DateTime64(3, 'UTC') COMMENT 'created_at of a call or output; ingested_at of a dependency (as its segment)',
    id          UUID COMMENT 'call_id, output_id, or the succeeding call of a dependency',
    row         String COMMENT 'JSONEachRow of the columns the API reads' CODEC(ZSTD(1)),
    ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (task_id, kind, ts, id)
TTL toDateTime(ts) + toIntervalDay(multiIf(kind = 'call', {invocations_days:UInt32}, kind = 'output', {outputs_days:UInt32}, {workflows_days:UInt32}))
SETTINGS index_granularity = 1024, min_compress_block_size = 16384, max_compress_block_size = 65536, non_replicated_deduplication_window = 10000;

-- The JSON of each row is the column list of src/queries/rows.ts (INVOCATION_COLUMNS,
-- DEPENDENCY_COLUMNS, OUTPUT_COLUMNS); test/integration/queries/task-view.test.ts checks that both ways agree.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.task_rows_calls TO {db:Identifier}.task_rows AS
SELECT task_id, 'call' AS kind, created_at AS ts, call_id AS id,
       formatRow('JSONEachRow', call_id, task_id, tool_id, agent_id, orchestrator, instance_id, args, args_hash, status,
                 duration_ms, result_summary, error, cost_usd, tokens_used, toUnixTimestamp64Milli(created_at) AS created_ms) AS row
FROM {db:Identifier}.tool_invocations
WHERE task_id != '';

CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.task_rows_dependencies TO {db:Identifier}.task_rows AS
SELECT task_id, 'dependency' AS kind, ingested_at AS ts, succeeding_call_id AS id,
       formatRow('JSONEachRow', task_id, preceding_call_id, succeeding_call_id, preceding_tool_id, succeeding_tool_id,
                 time_delta_ms, data_flow, origin) AS row
FROM {db:Identifier}.tool_workflows
WHERE task_id != '';

CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.task_rows_outputs TO {db:Identifier}.task_rows AS
SELECT task_id, 'output' AS kind, created_at AS ts, output_id AS id,
       formatRow('JSONEachRow', output_id, call_id, tool_id, content_type, content_hash, size_bytes, sample,
                 toUnixTimestamp64Milli(created_at) AS created_ms) AS row
FROM {db:Identifier}.tool_outputs
WHERE task_id != '';

-- Rows written before the views existed. A row inserted while this runs may be copied by both
-- the view and this statement; readers keep one per id. Outputs written before this migration
-- have task_id '': they are all orphans, found by call_id until they expire.
INSERT INTO {db:Identifier}.orphan_outputs (call_id, output_id, created_at)
SELECT call_id, output_id, created_at FROM {db:Identifier}.tool_outputs WHERE task_id = '';

INSERT INTO {db:Identifier}.task_rows (task_id, kind, ts, id, row)
SELECT task_id, 'call', created_at, call_id,
       formatRow('JSONEachRow', call_id, task_id, tool_id, agent_id, orchestrator, instance_id, args, args_hash, status,
                 duration_ms, result_summary, error, cost_usd, tokens_used, toUnixTimestamp64Milli(created_at) AS created_ms)
FROM {db:Identifier}.tool_invocations
WHERE task_id != '';

INSERT INTO {db:Identifier}.task_rows (task_id, kind, ts, id, row)
SELECT task_id, 'dependency', ingested_at, succeeding_call_id,
       formatRow('JSONEachRow', task_id, preceding_call_id, succeeding_call_id, preceding_tool_id, succeeding_tool_id,
                 time_delta_ms, data_flow, origin)
FROM {db:Identifier}.tool_workflows
WHERE task_id != '';
