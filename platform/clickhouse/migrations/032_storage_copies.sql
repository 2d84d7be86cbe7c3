-- Storage (≤ 600 bytes per call of active parts), two copies that served nothing another
-- copy does not. Measured on the 10 M-call history with its audit log built (24.2 M leaves):
--   audit_log_leaves.by_key — every leaf's key again, ordered by key (record_key kept LZ4 there:
--   projections do not take the table's codecs): 1,075 MB, 107.5 bytes per call, 44 % of the log.
--   A proof already reads the record's row first; the row's storage time finds its leaf through
--   the leaves' min/max index on stored_at (leaves are in storage order), so the key needs no
--   index of its own. Only `verify`, for a row with no leaf in its slice (tampering), scans the
--   keys of one kind.
--   tool_invocations.by_ingested — (ingested_at, args_key, call_id) by ingested_at, 28.8 bytes per
--   call: by_ingest_jobs (021, 028) holds those columns in the same order, and ClickHouse reads a
--   query's columns alone from whichever projection holds them all.
-- Dropping a projection removes its files from every part at once; nothing is rewritten.
ALTER TABLE {db:Identifier}.audit_log_leaves DROP PROJECTION IF EXISTS by_key;
ALTER TABLE {db:Identifier}.tool_invocations DROP PROJECTION IF EXISTS by_ingested;
