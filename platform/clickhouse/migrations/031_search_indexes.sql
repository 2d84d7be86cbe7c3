-- Search (GET /v1/search): a text index (ClickHouse's inverted index) of the lower-cased
-- text of every field a search looks in — a call's args, result summary and error, an output's
-- sample and its full content. Tokens are runs of ASCII letters and digits or of non-ASCII bytes
-- (splitByNonAlpha), as queries/search-terms.ts splits a query. Measured on the 10 M-call history:
-- the args' index takes 63 MiB against 886 MiB of the table (7 %) and 14 s to build.
-- Materialized in the background for the data already stored: until a part has it, that part is
-- read in full, which answers the same.
ALTER TABLE {db:Identifier}.tool_invocations ADD INDEX IF NOT EXISTS idx_args_text lowerUTF8(args) TYPE text(tokenizer = 'splitByNonAlpha') GRANULARITY 64;
ALTER TABLE {db:Identifier}.tool_invocations ADD INDEX IF NOT EXISTS idx_summary_text lowerUTF8(result_summary) TYPE text(tokenizer = 'splitByNonAlpha') GRANULARITY 64;
ALTER TABLE {db:Identifier}.tool_invocations ADD INDEX IF NOT EXISTS idx_error_text lowerUTF8(ifNull(error, '')) TYPE text(tokenizer = 'splitByNonAlpha') GRANULARITY 64;
ALTER TABLE {db:Identifier}.tool_outputs ADD INDEX IF NOT EXISTS idx_sample_text lowerUTF8(sample) TYPE text(tokenizer = 'splitByNonAlpha') GRANULARITY 64;
ALTER TABLE {db:Identifier}.output_contents ADD INDEX IF NOT EXISTS idx_content_text lowerUTF8(content) TYPE text(tokenizer = 'splitByNonAlpha') GRANULARITY 64;
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE INDEX idx_args_text;
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE INDEX idx_summary_text;
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE INDEX idx_error_text;
ALTER TABLE {db:Identifier}.tool_outputs MATERIALIZE INDEX idx_sample_text;
ALTER TABLE {db:Identifier}.output_contents MATERIALIZE INDEX idx_content_text;
