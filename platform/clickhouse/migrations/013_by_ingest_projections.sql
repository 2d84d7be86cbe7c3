-- The background jobs step through the segments by ingested_at: the auditor's checks,
-- the manifest rules and the analyzer's task lists read the rows ingested in one step. The
-- segments are ordered by task (or tool), so the rows of a step lie in every granule and each
-- such statement read whole columns: ~0.5–1.7 s per statement at 10 M calls, whatever the step's
-- size, and an API read on embedded ClickHouse waited for it. These projections keep the columns
-- those statements read in ingest order, so a step is a key range: its cost follows the step.
-- (by_ingested of migration 006 stays: the dedup indexer's narrow read.) About +35 % of
-- tool_invocations on disk (args is most of it), a few % on the other two.
ALTER TABLE {db:Identifier}.tool_invocations
    ADD PROJECTION IF NOT EXISTS by_ingest_jobs (
        SELECT ingested_at, call_id, task_id, tool_id, created_at, status, error, duration_ms, cost_usd, args_hash, args, instance_id, source
        ORDER BY ingested_at);
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE PROJECTION by_ingest_jobs;

ALTER TABLE {db:Identifier}.tool_outputs
    ADD PROJECTION IF NOT EXISTS by_ingest_jobs (SELECT ingested_at, output_id, call_id, task_id, created_at ORDER BY ingested_at);
ALTER TABLE {db:Identifier}.tool_outputs MATERIALIZE PROJECTION by_ingest_jobs;

ALTER TABLE {db:Identifier}.tool_workflows
    ADD PROJECTION IF NOT EXISTS by_ingest_jobs (SELECT ingested_at, task_id, preceding_call_id, succeeding_call_id, origin ORDER BY ingested_at);
ALTER TABLE {db:Identifier}.tool_workflows MATERIALIZE PROJECTION by_ingest_jobs;
