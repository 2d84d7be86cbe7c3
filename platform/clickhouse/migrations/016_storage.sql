-- Storage per call and a data directory without garbage.
--
-- Parts a merge (or mutation) replaced stay on disk as "outdated" until the table's cleanup
-- thread removes them: it runs every cleanup_delay_period (30 s) plus up to
-- cleanup_delay_period_random_add (10 s), backing off towards max_cleanup_delay_period (300 s)
-- while it finds little, and removes a part old_parts_lifetime (480 s on a server, 0 in chDB)
-- after it was replaced. Only a ClickHouse *server* removes them at a table's shutdown: an
-- embedded (chDB) process that exits leaves them behind (after the 10 M history build: 27 GB on
-- disk for 9.35 GiB of active parts). The next start removes them within a minute or so, but a
-- directory copied, backed up or measured meanwhile carries them.
--
-- So every MergeTree table removes a replaced part a second after it was replaced, checking every
-- 1–10 s, and a process closing embedded ClickHouse wakes the cleanup and waits for it
-- (platform/clickhouse/part-cleanup.ts). old_parts_lifetime guards against a machine crash losing
-- a merged part that was still only in the page cache (ClickHouse does not fsync merged parts by
-- default): merged and mutated parts are fsynced instead (min_compressed_bytes_to_fsync_after_merge
-- = 1), so their sources are not needed once they are written.

ALTER TABLE {db:Identifier}.analyzer_progress MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.budget_decisions MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.budget_versions MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.call_keys MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.dedup_progress MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.dedup_repeats MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.ingest_key_log MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.ingest_writers MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.mcp_tool_definitions MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.orphan_outputs MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.output_contents MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.output_keys MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.quarantine MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.quarantine_keys MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.quarantine_replays MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.schema_migrations MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.task_rows MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.tool_invocations MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.tool_manifests MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.tool_outputs MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.tool_workflows MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.violations MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.workflow_optimizations MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;

-- Bytes per call (npm run bench:storage; 1 M calls of bench:history: 1,022 before this migration).
-- Most of it is hashes and UUIDs, which no codec compresses; what can go without changing what a
-- read returns:
--  * by_tool is a whole second copy of tool_invocations (163 bytes per call). The reads it serves
--    (per-tool invocations, stats, cache simulation, tools summary) read neither fingerprint,
--    source nor ingested_at, which are a third of it: it is rebuilt without them.
--  * timestamps: Delta + ZSTD instead of LZ4 (rows of a task, of a tool or of an ingest step are
--    close in time): created_at 5.6 → ~2 bytes in every copy of a call, ts of task_rows 7.9 → 3.9.
-- Codecs apply to parts written from now on (inserts and merges); existing parts keep theirs.
ALTER TABLE {db:Identifier}.tool_invocations DROP PROJECTION IF EXISTS by_tool;
ALTER TABLE {db:Identifier}.tool_invocations
    ADD PROJECTION IF NOT EXISTS by_tool (
        SELECT call_id, task_id, tool_id, agent_id, orchestrator, instance_id, args, args_hash, status, duration_ms, result_summary,
               error, cost_usd, tokens_used, created_at
        ORDER BY tool_id, created_at);
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE PROJECTION by_tool;

ALTER TABLE {db:Identifier}.tool_invocations
    MODIFY COLUMN created_at CODEC(Delta, ZSTD(1)),
    MODIFY COLUMN ingested_at CODEC(Delta, ZSTD(1));
ALTER TABLE {db:Identifier}.tool_outputs
    MODIFY COLUMN created_at CODEC(Delta, ZSTD(1)),
    MODIFY COLUMN ingested_at CODEC(Delta, ZSTD(1));
ALTER TABLE {db:Identifier}.tool_workflows MODIFY COLUMN ingested_at CODEC(Delta, ZSTD(1));
ALTER TABLE {db:Identifier}.task_rows
    MODIFY COLUMN ts CODEC(Delta, ZSTD(1)),
    MODIFY COLUMN ingested_at CODEC(Delta, ZSTD(1));
