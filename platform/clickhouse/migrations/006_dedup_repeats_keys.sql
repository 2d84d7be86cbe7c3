-- Dedup candidates, second step: everything the grouping of dedup_repeats needs as
-- 8-byte numbers computed once, when the indexer copies a call, instead of per query from the
-- 64-character args_hash and the call_id (which cost ~1 s per query at 10 M calls):
--   check_key   a second hash of (tool_id, args_hash): a group of one args_key whose check_key
--               varies is a cityHash64 collision, and the answer is recomputed exactly;
--   hash_prefix the first 16 hex digits of args_hash as a number (sorts like args_hash);
--   first_order created_at in ms, then a hash of call_id: the "first call" of a group.
ALTER TABLE {db:Identifier}.dedup_repeats
    ADD COLUMN IF NOT EXISTS check_key UInt64 MATERIALIZED sipHash64(tool_id, args_hash);
ALTER TABLE {db:Identifier}.dedup_repeats
    ADD COLUMN IF NOT EXISTS hash_prefix UInt64 MATERIALIZED reinterpretAsUInt64(reverse(unhex(substring(args_hash, 1, 16))));
ALTER TABLE {db:Identifier}.dedup_repeats
    ADD COLUMN IF NOT EXISTS first_order UInt64 MATERIALIZED toUInt64(toUnixTimestamp64Milli(created_at)) * 65536 + cityHash64(call_id) % 65536;
ALTER TABLE {db:Identifier}.dedup_repeats MATERIALIZE COLUMN check_key;
ALTER TABLE {db:Identifier}.dedup_repeats MATERIALIZE COLUMN hash_prefix;
ALTER TABLE {db:Identifier}.dedup_repeats MATERIALIZE COLUMN first_order;

-- The calls ingested since a watermark (the dedup indexer, the live part of dedup queries, the
-- analyzer): once parts merge, every granule spans weeks of ingested_at and its min/max index
-- prunes nothing. This narrow projection makes "ingested after T" a key range.
ALTER TABLE {db:Identifier}.tool_invocations
    ADD PROJECTION IF NOT EXISTS by_ingested (SELECT ingested_at, args_key, call_id ORDER BY ingested_at);
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE PROJECTION by_ingested;
