-- MCP tool definitions, append-only: one row per change the `tool-audit mcp` gateway
-- reported (POST /v1/mcp/tools) — a tool added to, changed in or removed from a server's
-- tools/list — never one per report, so a list re-sent unchanged adds nothing. `version` is the
-- manifest version the change was applied with (the rows of one apply are one insert). Kept
-- without TTL, as tool_manifests: a definition history is small and explains old findings.
CREATE TABLE IF NOT EXISTS {db:Identifier}.mcp_tool_definitions
(
    server          String COMMENT 'the gateway''s name for the upstream MCP server',
    tool_id         String COMMENT 'server/tool',
    tool            String COMMENT 'the tool''s name on its server',
    definition_hash String COMMENT 'SHA-256 hex of the canonical JSON of description, title, inputSchema, outputSchema, annotations',
    definition      String COMMENT 'the MCP tool as tools/list returned it (JSON); for removed: the last definition known' CODEC(ZSTD(3)),
    change          Enum8('added' = 1, 'changed' = 2, 'removed' = 3),
    version         UInt32 COMMENT 'the tool_manifests version applied with the change',
    seen_at         DateTime64(3, 'UTC') COMMENT 'when the gateway saw the list',
    recorded_at     DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY (server, tool_id, version)
SETTINGS non_replicated_deduplication_window = 10000;
