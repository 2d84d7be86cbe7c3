-- The calls stored before 036's view existed. migrate.ts runs this file once every insert begun
-- before it has ended (platform/clickhouse/cutover.ts): every call is then either read here or
-- counted by the view, and one counted by both only makes its count err upwards (036). A row per
-- call, not grouped: the parts merge the counts in the background, and the statement holds no
-- table of every key.
INSERT INTO {db:Identifier}.key_counts (k, n, last_month)
SELECT toUInt32(bitShiftRight(args_key, 32)), 1, toStartOfMonth(created_at)
FROM {db:Identifier}.tool_invocations;
