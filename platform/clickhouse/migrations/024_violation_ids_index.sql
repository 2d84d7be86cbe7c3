-- A task's or a call's violations (GET /v1/violations?task_id= / ?call_id=, the task page): the
-- violations naming given ids. violations is ordered by (invariant, detected_at, key), so without
-- an index every such read scans all ids; a bloom filter of ids per granule skips the granules
-- naming none of them. 0.0001 false positives per id: a task of a hundred calls still skips ~99 %
-- of the granules that do not hold its violations (~2.5 bytes per violation).
ALTER TABLE {db:Identifier}.violations ADD INDEX IF NOT EXISTS idx_ids ids TYPE bloom_filter(0.0001) GRANULARITY 1;
ALTER TABLE {db:Identifier}.violations MATERIALIZE INDEX idx_ids;
