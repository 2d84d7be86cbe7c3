-- Read-path support for the query API (SPEC §5). Idempotent; applied by `tool-audit migrate`.

-- Task view: the outputs of a task's calls are looked up by call_id. The bloom filter on
-- tool_outputs finds the right granules, but each match still reads a whole 8192-row granule of
-- samples; this projection, sorted by call_id with 64-row granules, reads ~64 rows per call.
ALTER TABLE {db:Identifier}.tool_outputs
    ADD PROJECTION IF NOT EXISTS by_call (SELECT * ORDER BY call_id) WITH SETTINGS (index_granularity = 64);

-- Builds the projection for parts written before this migration (a background mutation; a no-op
-- on an empty table).
ALTER TABLE {db:Identifier}.tool_outputs MATERIALIZE PROJECTION by_call;

-- Dedup candidates: a 64-bit key of (tool_id, args_hash). Finding the repeated keys among
-- millions of mostly unique calls is a hash aggregation whose cost is the key; 8 bytes instead
-- of a 64-character hex string makes that first pass several times cheaper. The exact grouping
-- is still by (tool_id, args_hash), so a collision can never merge two groups.
ALTER TABLE {db:Identifier}.tool_invocations
    ADD COLUMN IF NOT EXISTS args_key UInt64 MATERIALIZED cityHash64(tool_id, args_hash)
    COMMENT 'cityHash64(tool_id, args_hash): first-pass key of dedup candidates';

-- Writes the key into parts written before this migration (reads two columns, writes one).
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE COLUMN args_key;
