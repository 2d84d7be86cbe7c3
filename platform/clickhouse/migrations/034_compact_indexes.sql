-- Storage, the last bytes to ≤ 600 a call, measured on the 10 M-call history with its
-- jobs caught up (bench:storage):
--   the search indexes (031) rebuilt with bit-packed posting lists and dictionary blocks of 4,096
--   tokens instead of 512: −3.1 bytes a call (outputs' samples 127 → 108 MB, summaries 20 → 13,
--   args 66 → 63); a common token's posting list decodes in ~11 ms instead of ~4;
--   the audit log's leaf_index, which counts up by one, with DoubleDelta instead of Delta: −0.9.
-- Until a part's new index is written (a mutation, in the background) a search reads that part in
-- full, which answers the same; leaf_index takes its codec in parts written or merged from now on.
ALTER TABLE {db:Identifier}.audit_log_leaves MODIFY COLUMN leaf_index UInt64 CODEC(DoubleDelta, ZSTD(1));
ALTER TABLE {db:Identifier}.tool_invocations DROP INDEX IF EXISTS idx_args_text;
ALTER TABLE {db:Identifier}.tool_invocations ADD INDEX IF NOT EXISTS idx_args_text lowerUTF8(args) TYPE text(tokenizer = 'splitByNonAlpha', posting_list_codec = 'bitpacking', dictionary_block_size = 4096) GRANULARITY 64;
ALTER TABLE {db:Identifier}.tool_invocations DROP INDEX IF EXISTS idx_summary_text;
ALTER TABLE {db:Identifier}.tool_invocations ADD INDEX IF NOT EXISTS idx_summary_text lowerUTF8(result_summary) TYPE text(tokenizer = 'splitByNonAlpha', posting_list_codec = 'bitpacking', dictionary_block_size = 4096) GRANULARITY 64;
ALTER TABLE {db:Identifier}.tool_invocations DROP INDEX IF EXISTS idx_error_text;
ALTER TABLE {db:Identifier}.tool_invocations ADD INDEX IF NOT EXISTS idx_error_text lowerUTF8(ifNull(error, '')) TYPE text(tokenizer = 'splitByNonAlpha', posting_list_codec = 'bitpacking', dictionary_block_size = 4096) GRANULARITY 64;
ALTER TABLE {db:Identifier}.tool_outputs DROP INDEX IF EXISTS idx_sample_text;
ALTER TABLE {db:Identifier}.tool_outputs ADD INDEX IF NOT EXISTS idx_sample_text lowerUTF8(sample) TYPE text(tokenizer = 'splitByNonAlpha', posting_list_codec = 'bitpacking', dictionary_block_size = 4096) GRANULARITY 64;
ALTER TABLE {db:Identifier}.output_contents DROP INDEX IF EXISTS idx_content_text;
ALTER TABLE {db:Identifier}.output_contents ADD INDEX IF NOT EXISTS idx_content_text lowerUTF8(content) TYPE text(tokenizer = 'splitByNonAlpha', posting_list_codec = 'bitpacking', dictionary_block_size = 4096) GRANULARITY 64;
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE INDEX idx_args_text;
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE INDEX idx_summary_text;
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE INDEX idx_error_text;
ALTER TABLE {db:Identifier}.tool_outputs MATERIALIZE INDEX idx_sample_text;
ALTER TABLE {db:Identifier}.output_contents MATERIALIZE INDEX idx_content_text;
