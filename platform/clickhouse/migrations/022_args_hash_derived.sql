-- Storage per call: args_hash, 64 hex characters that no codec compresses, was
-- stored in tool_invocations and again in its by_tool projection (128 bytes per call). It is
-- derived data: ingest stores the canonical args and accepts a call only when its args_hash is
-- the SHA-256 of exactly those args (I5), so args_hash is computed from args when read (an ALIAS
-- column: every statement reading args_hash still does), and nothing stores it twice. Reads that
-- group many calls by their args group by args_key (stored, 8 bytes) or by args itself.
--
-- An audit store must not change what it answers: the first statement refuses the migration
-- when a stored call's args_hash differs from the SHA-256 of its args (none can be written
-- through ingest; rows written by hand could), naming how many.
SELECT throwIf(count() > 0, 'migration 022: some calls in tool_invocations have an args_hash that is not the SHA-256 of their args (I5); they would read differently once args_hash is derived, so the migration stops. Find them with: SELECT call_id FROM tool_invocations WHERE args_hash != lower(hex(SHA256(args)))')
FROM {db:Identifier}.tool_invocations
WHERE args_hash != lower(hex(SHA256(args)));

ALTER TABLE {db:Identifier}.tool_invocations
    MODIFY COLUMN args_key UInt64 MATERIALIZED cityHash64(tool_id, lower(hex(SHA256(args))))
    COMMENT 'cityHash64(tool_id, args_hash): first-pass key of dedup candidates';
ALTER TABLE {db:Identifier}.tool_invocations DROP PROJECTION IF EXISTS by_tool;
-- The bloom filter on args_hash (migration 001) served no read: no statement looks a call up by it.
ALTER TABLE {db:Identifier}.tool_invocations DROP INDEX IF EXISTS idx_args_hash;
ALTER TABLE {db:Identifier}.tool_invocations DROP COLUMN args_hash;
ALTER TABLE {db:Identifier}.tool_invocations
    ADD COLUMN args_hash String ALIAS lower(hex(SHA256(args)))
    COMMENT 'SHA-256 of the canonical args (I5), computed from args when read' AFTER args;
ALTER TABLE {db:Identifier}.tool_invocations
    ADD PROJECTION IF NOT EXISTS by_tool (
        SELECT call_id, task_id, tool_id, agent_id, orchestrator, instance_id, args, status, duration_ms, result_summary,
               error, cost_usd, tokens_used, created_at
        ORDER BY tool_id, created_at);
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE PROJECTION by_tool;
