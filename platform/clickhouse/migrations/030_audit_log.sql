-- The audit log: every stored tool_call, output, dependency and violation is a leaf of
-- one append-only Merkle tree (RFC 9162), in the order the log builder sequenced them (by the
-- time each row was stored). A leaf's hash is SHA-256(0x00 ‖ the row serialized field by field),
-- computed by ClickHouse from the stored row itself, so a row changed afterwards no longer hashes
-- to its leaf. Signed tree heads fix the tree at a size; proofs are made from the leaves and the
-- stored roots of complete subtrees of 2^8, 2^16 and 2^24 leaves. Replaced parts go within
-- seconds, as everywhere (016).

CREATE TABLE IF NOT EXISTS {db:Identifier}.audit_log_leaves
(
    leaf_index  UInt64 CODEC(Delta, ZSTD(1)),
    kind        LowCardinality(String) COMMENT 'tool_call, output, dependency or violation',
    record_key  String COMMENT 'call_id, output_id, task_id/preceding>succeeding/origin, or violation_key' CODEC(ZSTD(1)),
    leaf_hash   FixedString(32),
    stored_at   DateTime64(3, 'UTC') COMMENT 'ingested_at (detected_at of a violation) of the row' CODEC(DoubleDelta, ZSTD(1)),
    created_at  DateTime64(3, 'UTC') COMMENT 'when the record itself says it happened: what retention goes by' CODEC(Delta, ZSTD(1)),
    INDEX stored_range stored_at TYPE minmax GRANULARITY 1,
    -- A record's leaf by its key: only the index is kept in key order, the hash is read by it.
    PROJECTION by_key (SELECT kind, record_key, leaf_index ORDER BY kind, record_key)
)
ENGINE = MergeTree
ORDER BY leaf_index
SETTINGS index_granularity = 256, old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;

CREATE TABLE IF NOT EXISTS {db:Identifier}.audit_log_nodes
(
    level       UInt8 COMMENT '8, 16 or 24: the root of leaves [node_index·2^level, (node_index+1)·2^level)',
    node_index  UInt64,
    hash        FixedString(64) COMMENT 'lower-case hex'
)
ENGINE = ReplacingMergeTree
ORDER BY (level, node_index)
SETTINGS index_granularity = 256, old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;

CREATE TABLE IF NOT EXISTS {db:Identifier}.audit_log_heads
(
    tree_size   UInt64,
    root_hash   FixedString(64) COMMENT 'lower-case hex',
    built_to    DateTime64(3, 'UTC') COMMENT 'every row stored up to then is a leaf of this tree',
    signed_at   DateTime64(3, 'UTC'),
    key_id      String,
    signature   String COMMENT 'Ed25519 over the head text (docs/design.md), base64',
    public_key  String COMMENT 'the signing key''s public part, base64 DER: what to check it with (pin it: the database is what is being checked)'
)
ENGINE = ReplacingMergeTree
ORDER BY tree_size
SETTINGS old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
