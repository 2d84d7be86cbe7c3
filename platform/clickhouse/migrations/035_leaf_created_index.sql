-- A proof finds its leaf while it reads its row (after 032 dropped the leaves' index by
-- key): the record's created_at comes from the keys table (call_keys, output_keys: a primary-key
-- read), and this min/max index on the leaves' created_at finds the granule of that instant, as
-- stored_range does for stored_at. Leaves are in storage order, which follows created_at closely
-- (a call is stored seconds after it happened), so a granule's created_at range is narrow.
-- ~0.03 bytes per call. Materialized in the background; until then a lookup by created_at reads
-- the whole column (slower, same answer).
ALTER TABLE {db:Identifier}.audit_log_leaves ADD INDEX IF NOT EXISTS created_range created_at TYPE minmax GRANULARITY 1;
ALTER TABLE {db:Identifier}.audit_log_leaves MATERIALIZE INDEX created_range;
