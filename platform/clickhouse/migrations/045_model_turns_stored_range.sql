-- Model turns are leaves of the audit log: the builder reads each step's turns by storage time
-- (ingested_at), as it reads every kind, and verify reads them slice by slice. The table is
-- ordered by task, so without an index each step would read the whole ingested_at column; this
-- min/max index finds the granules of a step's window (turns are inserted in storage order, so a
-- granule's range is narrow). Materialized in the background; until then a step reads the column
-- (slower, same answer).
ALTER TABLE {db:Identifier}.model_turns ADD INDEX IF NOT EXISTS stored_range ingested_at TYPE minmax GRANULARITY 1;
ALTER TABLE {db:Identifier}.model_turns MATERIALIZE INDEX stored_range;
