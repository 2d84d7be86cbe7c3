-- Task view: one task's calls, dependencies and outputs in one primary-key range.
--
-- Reading a task from the segments takes three statements over ~25 columns of three tables, and
-- the outputs are random call_id look-ups (one granule each); at 10 M calls that is ~50 ms. Here
-- every row of a task is kept once more, as the JSON of the columns the API returns, sorted by
-- task: the whole view is one range read of two columns. Rows arrive through materialized views,
-- so every insert path (ingest, analyzer, replays) feeds it; it is derived data, never written
-- by hand, and a row may appear twice (an insert retried past deduplication): readers keep one
-- per id.

-- The task of an output: outputs carry no task_id, so the ingest writer stamps the task of the
-- output's call when it knows the call (the call in the same round, or one it wrote recently);
-- '' = the call has no task; NULL = the call was not known at ingest (the output arrived before
-- it, or at another worker). Outputs stored with NULL are listed in orphan_outputs by ingested_at:
-- the read API keeps their call_ids in memory (a snapshot, plus the tail it reads with every task
-- view) and looks the task's calls up in them.
ALTER TABLE {db:Identifier}.tool_outputs
    ADD COLUMN IF NOT EXISTS task_id Nullable(String) COMMENT 'task of the call, stamped at ingest: empty = the call has no task, NULL = call not known'
    AFTER call_id;

CREATE TABLE IF NOT EXISTS {db:Identifier}.orphan_outputs
(
    call_id     UUID,
    output_id   UUID,
    created_at  DateTime64(3, 'UTC'),
    ingested_at DateTime64(3, 'UTC')
)
ENGINE = MergeTree
ORDER BY (ingested_at, call_id)
TTL toDateTime(created_at) + toIntervalDay({outputs_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.orphan_outputs_mv TO {db:Identifier}.orphan_outputs AS
SELECT call_id, output_id, created_at, ingested_at FROM {db:Identifier}.tool_outputs WHERE task_id IS NULL;

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
SELECT assumeNotNull(task_id) AS task_id, 'output' AS kind, created_at AS ts, output_id AS id,
       formatRow('JSONEachRow', output_id, call_id, tool_id, content_type, content_hash, size_bytes, sample,
                 toUnixTimestamp64Milli(created_at) AS created_ms) AS row
FROM {db:Identifier}.tool_outputs
WHERE task_id IS NOT NULL AND task_id != '';

-- Rows written before the views existed. A row inserted while this runs may be copied by both
-- the view and these statements; readers keep one per id. An output written before this
-- migration (task_id NULL) joins its call here; one whose call is not stored becomes an orphan.
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

INSERT INTO {db:Identifier}.task_rows (task_id, kind, ts, id, row)
SELECT c.task_id, 'output', o.created_at, o.output_id,
       formatRow('JSONEachRow', o.output_id AS output_id, o.call_id AS call_id, o.tool_id AS tool_id, o.content_type AS content_type,
                 o.content_hash AS content_hash, o.size_bytes AS size_bytes, o.sample AS sample, toUnixTimestamp64Milli(o.created_at) AS created_ms)
FROM {db:Identifier}.tool_outputs AS o
INNER JOIN (SELECT call_id, task_id FROM {db:Identifier}.tool_invocations
            WHERE call_id IN (SELECT call_id FROM {db:Identifier}.tool_outputs WHERE task_id IS NULL)) AS c ON o.call_id = c.call_id
WHERE o.task_id IS NULL AND c.task_id != '';

INSERT INTO {db:Identifier}.orphan_outputs (call_id, output_id, created_at, ingested_at)
SELECT call_id, output_id, created_at, ingested_at FROM {db:Identifier}.tool_outputs
WHERE task_id IS NULL
  AND call_id NOT IN (SELECT call_id FROM {db:Identifier}.tool_invocations
                      WHERE call_id IN (SELECT call_id FROM {db:Identifier}.tool_outputs WHERE task_id IS NULL));
