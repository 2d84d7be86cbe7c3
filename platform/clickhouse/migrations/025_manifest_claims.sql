-- Manifest versions across processes: a version number was max + 1 per process, so two
-- processes applying at once could both write version N with different tools (a version is read
-- as all its rows: mixed, it no longer read whole). An apply now claims its number first; the
-- claim stored earliest (server time) wins, the other apply takes the next number
-- (analyzers/manifest-claims.ts). A claim whose apply died before writing leaves a gap, which
-- readers skip. Small: one row per apply, kept without TTL like the manifests.
CREATE TABLE IF NOT EXISTS {db:Identifier}.manifest_claims
(
    version    UInt32,
    apply_id   UUID COMMENT 'one per apply attempt',
    claimed_at DateTime64(6, 'UTC') DEFAULT now64(6) COMMENT 'server time: the earliest claim of a version wins',
    applied_by String COMMENT 'who applies (the API key id; local for the CLI)'
)
ENGINE = MergeTree
ORDER BY (version, claimed_at, apply_id)
-- Replaced parts removed within seconds, as every table since migration 016.
SETTINGS old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;

-- Who applied each version: the API key id of PUT /v1/manifests or POST /v1/mcp/tools ('local'
-- from the CLI on the database itself; '' for versions applied before this migration).
ALTER TABLE {db:Identifier}.tool_manifests ADD COLUMN IF NOT EXISTS applied_by String DEFAULT '' COMMENT 'API key id that applied the version';
