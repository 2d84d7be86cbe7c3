-- Approvals: a tool whose manifest says requires_approval (or that carries all three
-- capability tags, tool-smith's lethal trifecta) must not run without a human approval. The
-- orchestrator that asked for it sends it with the call (invocation.approval: approved_by,
-- approved_at, reference); ingest stores it here as JSON text, '' when the call has none, and M9
-- judges it. An empty string per call costs nothing on disk; existing calls read as having none.
ALTER TABLE {db:Identifier}.tool_invocations
    ADD COLUMN IF NOT EXISTS approval String DEFAULT ''
    COMMENT 'approval of the call as JSON (approved_by, approved_at, reference); empty when none' CODEC(ZSTD(1));
