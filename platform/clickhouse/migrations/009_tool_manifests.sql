-- Tool manifests (tool-smith.md), append-only: each apply writes one new version of the whole
-- manifest, one row per tool, in one insert (a version is all there or not at all). A call is
-- judged by the version in force at its created_at; the first version also covers earlier calls.
-- Kept without TTL: a version judges calls for as long as they are retained, and it is small.
CREATE TABLE IF NOT EXISTS {db:Identifier}.tool_manifests
(
    version      UInt32 COMMENT '1, 2, … in apply order',
    effective_at DateTime64(3, 'UTC') COMMENT 'when the version took effect (strictly after the previous one)',
    tools        UInt32 COMMENT 'tools in the version (each row says it)',
    tool_id      String,
    entry        String COMMENT 'the entry as JSON, every default applied' CODEC(ZSTD(3)),
    idempotent   UInt8 COMMENT 'copied from entry, for the cache statements and panels',
    cache_ttl_ms Nullable(UInt64) COMMENT 'copied from entry; 0 or null = no cache',
    warnings     Array(String) COMMENT 'warnings answered when the version was applied',
    applied_at   DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY (version, tool_id)
SETTINGS non_replicated_deduplication_window = 10000;
