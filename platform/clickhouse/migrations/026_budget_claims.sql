-- Budget set versions across processes: a version was max(now, the process's last + 1)
-- in ms, so two processes applying in the same millisecond wrote the same version, and the second
-- insert was dropped as a retry of the first (same deduplication token) while its process answered
-- as if applied. An apply now claims its number first, as manifest applies do since 025
-- (analyzers/manifest-claims.ts); versions stay milliseconds since the epoch (at least the server's
-- now). Small: one row per apply, kept without TTL like the budget versions.
CREATE TABLE IF NOT EXISTS {db:Identifier}.budget_claims
(
    version    UInt64,
    apply_id   UUID COMMENT 'one per apply attempt',
    claimed_at DateTime64(6, 'UTC') DEFAULT now64(6) COMMENT 'server time: the earliest claim of a version wins',
    applied_by String COMMENT 'who applies (the API key id; local for the CLI)'
)
ENGINE = MergeTree
ORDER BY (version, claimed_at, apply_id)
-- Replaced parts removed within seconds, as every table since migration 016.
SETTINGS old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
