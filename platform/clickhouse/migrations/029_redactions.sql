-- Secrets never stored: ingest takes them out of a call's args, result summary and
-- error and out of an output's content before a row is written, and the emitters do the same
-- before a packet leaves the agent. Each secret becomes a placeholder `[redacted:<rule>:<16 hex>]`
-- (an HMAC of it under the deployment's key); this column says where, as JSON
-- [{"pointer": "/args/headers/Authorization", "rule": "bearer_token"}], read off the placeholders
-- of the stored values. '' for a row without any: nothing on disk, and rows stored before this
-- read as having none.
ALTER TABLE {db:Identifier}.tool_invocations
    ADD COLUMN IF NOT EXISTS redactions String DEFAULT ''
    COMMENT 'where secrets were replaced by placeholders, as JSON [{pointer, rule}]; empty when none' CODEC(ZSTD(1));
ALTER TABLE {db:Identifier}.tool_outputs
    ADD COLUMN IF NOT EXISTS redactions String DEFAULT ''
    COMMENT 'where secrets were replaced by placeholders in the content, as JSON [{pointer, rule}]; empty when none' CODEC(ZSTD(1));
