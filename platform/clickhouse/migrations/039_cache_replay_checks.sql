-- When the dedup indexer last finished checking the cache replays. Such a check at T
-- left a true replay (or none, or a tombstone) for every key of a cacheable tool whose calls were
-- last copied at or before T minus the indexer's overlap: such a copy was visible to it (a copy
-- commits within the overlap), and a key it found due was replayed after T, at least the overlap
-- after that copy. So a read needs no per-key comparison of the replay with the key's copies: it
-- takes the kept replays of every key not copied after the newest check minus the overlap (a few
-- keys, read by one column), instead of grouping every indexed key's copies on each read (30 M
-- calls: ~100 ms of the simulation's ~300 ms alone, twice). No row (a new store, or no check for a
-- week): every key copied at all is replayed on the read.
CREATE TABLE IF NOT EXISTS {db:Identifier}.cache_replay_checks
(
    checked_at DateTime64(3, 'UTC') COMMENT 'server time when a complete check began',
    updated_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY checked_at
TTL toDateTime(checked_at) + toIntervalDay(7)
-- Part cleanup as every table's (migration 016).
SETTINGS old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1, default_compression_codec = 'ZSTD(1)';
