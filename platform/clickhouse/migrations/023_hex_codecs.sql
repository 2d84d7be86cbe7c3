-- Storage per call: the hex hashes — fingerprint (32 hex characters, in each
-- segment and key table) and content_hash (64) — were stored with the default LZ4, which does not
-- entropy-code: 4 bits of information per 8-bit character took 8. ZSTD does, and halves them
-- (measured on 1 M random fingerprints: 32.1 → 16.0 bytes each, as small as the binary digest,
-- without changing a type, a reader or a writer). ~−80 bytes per call at 10 M calls.
-- Codecs apply to parts written from now on (inserts and merges); parts already written keep
-- theirs until a merge rewrites them (segments are never rewritten just for this).
ALTER TABLE {db:Identifier}.tool_invocations MODIFY COLUMN fingerprint FixedString(32) CODEC(ZSTD(1));
ALTER TABLE {db:Identifier}.tool_outputs MODIFY COLUMN fingerprint FixedString(32) CODEC(ZSTD(1));
ALTER TABLE {db:Identifier}.tool_outputs MODIFY COLUMN content_hash FixedString(64) CODEC(ZSTD(1));
ALTER TABLE {db:Identifier}.tool_workflows MODIFY COLUMN fingerprint FixedString(32) CODEC(ZSTD(1));
ALTER TABLE {db:Identifier}.workflow_optimizations MODIFY COLUMN fingerprint FixedString(32) CODEC(ZSTD(1));
ALTER TABLE {db:Identifier}.call_keys MODIFY COLUMN fingerprint FixedString(32) CODEC(ZSTD(1));
ALTER TABLE {db:Identifier}.output_keys MODIFY COLUMN fingerprint FixedString(32) CODEC(ZSTD(1));
ALTER TABLE {db:Identifier}.output_contents MODIFY COLUMN content_hash FixedString(64) CODEC(ZSTD(1));
ALTER TABLE {db:Identifier}.dedup_repeats MODIFY COLUMN args_hash FixedString(64) CODEC(ZSTD(1));
