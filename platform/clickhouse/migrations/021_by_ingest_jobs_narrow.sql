-- Storage per call: the jobs' projection of tool_invocations (migration 013)
-- held args_hash, 64 hex characters that no codec compresses: 64 of its ~123 bytes per call.
-- Its only reader was the manifest rules' M5, which groups a task's retries by (tool_id, args)
-- and now reads args_key (8 bytes, already stored beside every call) instead. The projection is
-- rebuilt without args_hash; until a part's new projection is written (a mutation, in the
-- background), the jobs read that part from the table itself.
ALTER TABLE {db:Identifier}.tool_invocations DROP PROJECTION IF EXISTS by_ingest_jobs;
ALTER TABLE {db:Identifier}.tool_invocations
    ADD PROJECTION IF NOT EXISTS by_ingest_jobs (
        SELECT ingested_at, call_id, task_id, tool_id, created_at, status, error, duration_ms, cost_usd, args_key, args, instance_id, source
        ORDER BY ingested_at);
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE PROJECTION by_ingest_jobs;
