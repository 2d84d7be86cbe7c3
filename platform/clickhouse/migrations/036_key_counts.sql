-- How often each args_key prefix occurs: the dedup indexer's first build, or its run
-- after any large backlog (a backfill, a long stop), needs every args_key that occurs twice or
-- more. Grouping the whole table's args_key for that costs a hash table of every distinct key
-- (~1 GB at 30 M calls), so the indexer split it into parts of the key space, each a scan of the
-- table: 86 s at 30 M calls alone, 664 s beside readers. Counted as calls are inserted, the
-- repeated keys are a read of this table instead: a superset of them, the prefixes counted twice
-- or more, whose calls the indexer then groups by their full args_key (analyzers/dedup-index.ts).
--
-- k is the upper 32 bits of args_key: sorted, 32-bit prefixes compress to ~1.5 bytes each (full
-- 64-bit keys would take ~5), and a prefix shared by two different keys only adds candidates,
-- which the indexer's grouping by args_key drops (~1 % of keys at 30 M calls). Counts only ever
-- err upwards (an insert counted by the view and by 037 both, or a retried insert), which keeps
-- the prefixes a superset; a process killed between a call's insert and its view's leaves a count
-- short (docs/design.md), which routine indexer runs do not depend on (they count by scanning).
-- last_month is the month of the key's newest call: a row lives a month past its calls' retention.
CREATE TABLE IF NOT EXISTS {db:Identifier}.key_counts
(
    k          UInt32 CODEC(Delta, T64, ZSTD(1)),
    n          SimpleAggregateFunction(sum, UInt64) CODEC(T64, ZSTD(1)),
    last_month SimpleAggregateFunction(max, Date) CODEC(T64, ZSTD(1))
)
ENGINE = AggregatingMergeTree
ORDER BY k
TTL toDateTime(last_month) + toIntervalDay({invocations_days:UInt32} + 31)
-- Part cleanup as every table's (migration 016).
SETTINGS old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.key_counts_mv TO {db:Identifier}.key_counts AS
SELECT toUInt32(bitShiftRight(args_key, 32)) AS k, count() AS n, max(toStartOfMonth(created_at)) AS last_month
FROM {db:Identifier}.tool_invocations
GROUP BY k;
