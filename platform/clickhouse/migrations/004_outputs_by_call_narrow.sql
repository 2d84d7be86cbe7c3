-- Task view, second step: the outputs of a task's calls are random call_id look-ups,
-- each reading one granule of the projection. 002's by_call (SELECT *, 64-row granules, default
-- 64 KiB compressed blocks) still decompressed ~64 KiB per column per call; this one keeps only
-- the columns the API returns, 32-row granules and 4-16 KiB blocks: ~2.5x faster at 10 M rows.
ALTER TABLE {db:Identifier}.tool_outputs DROP PROJECTION IF EXISTS by_call;

ALTER TABLE {db:Identifier}.tool_outputs
    ADD PROJECTION IF NOT EXISTS by_call_id
    (SELECT output_id, call_id, tool_id, content_type, content_hash, size_bytes, sample, created_at ORDER BY call_id)
    WITH SETTINGS (index_granularity = 32, min_compress_block_size = 4096, max_compress_block_size = 16384);

ALTER TABLE {db:Identifier}.tool_outputs MATERIALIZE PROJECTION by_call_id;
