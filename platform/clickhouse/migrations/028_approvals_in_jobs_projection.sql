-- Approvals, part two: M9 reads a step's approvals with its calls, from the jobs'
-- projection in ingest order. A look-up by task and call_id per 500 calls made a cold start at
-- 10 M calls (17 k approval-needing calls per step) spend its first minute on look-ups beside
-- ingest. The projection is rebuilt with the column; until a part's new projection is written (a
-- mutation, in the background), the jobs read that part from the table itself, as after 021.
ALTER TABLE {db:Identifier}.tool_invocations DROP PROJECTION IF EXISTS by_ingest_jobs;
ALTER TABLE {db:Identifier}.tool_invocations
    ADD PROJECTION IF NOT EXISTS by_ingest_jobs (
        SELECT ingested_at, call_id, task_id, tool_id, created_at, status, error, duration_ms, cost_usd, args_key, args, instance_id, source, approval
        ORDER BY ingested_at);
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE PROJECTION by_ingest_jobs;
