-- Storage, ZSTD for every column that names no codec, projections included. A
-- projection does not take its table's column codecs: it writes LZ4 (measured: a column of hex
-- digests declared CODEC(ZSTD(1)) takes 32 MB in the table and 64 MB in a projection of it). The
-- MergeTree setting default_compression_codec applies to every column without a codec of its own,
-- in the table and in its projections. Parts written from now on take it; parts already stored
-- take it when a merge rewrites them. Columns with their own codec keep it.
ALTER TABLE {db:Identifier}.tool_invocations MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.tool_outputs MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.tool_workflows MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.task_rows MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.call_keys MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.output_keys MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.tool_durations MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.audit_log_leaves MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.dedup_repeats MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.cache_key_calls MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.violations MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.output_contents MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.quarantine MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.quarantine_keys MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.quarantine_replays MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.orphan_outputs MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.ingest_key_log MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.task_hours MODIFY SETTING default_compression_codec = 'ZSTD(1)';
ALTER TABLE {db:Identifier}.tool_hours MODIFY SETTING default_compression_codec = 'ZSTD(1)';
