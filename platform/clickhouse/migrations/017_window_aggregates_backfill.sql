-- The calls ingested before the cutover of 015 (window_aggregates_cutover), which its views do not
-- count. migrate.ts runs this file only once the cutover is set and past and every insert begun
-- before it has ended (platform/clickhouse/cutover.ts): then every such call is stored and none is
-- added later (ingested_at is the server's time at insert), so each call is counted once.

INSERT INTO {db:Identifier}.task_hours
SELECT toStartOfHour(created_at) AS hour, task_id, count(), countIf(status != 'success'), sum(ifNull(cost_usd, 0)),
       min(created_at), max(created_at), groupUniqArray(toString(agent_id))
FROM {db:Identifier}.tool_invocations
WHERE task_id != '' AND ingested_at < (SELECT min(at) FROM {db:Identifier}.window_aggregates_cutover)
GROUP BY hour, task_id;

INSERT INTO {db:Identifier}.tool_hours
SELECT tool_id, toStartOfHour(created_at) AS hour, count(), countIf(status = 'success'), sum(duration_ms), sum(ifNull(cost_usd, 0)),
       sumMap(map(duration_bucket, toUInt64(1)))
FROM {db:Identifier}.tool_invocations
WHERE ingested_at < (SELECT min(at) FROM {db:Identifier}.window_aggregates_cutover)
GROUP BY tool_id, hour;

INSERT INTO {db:Identifier}.tool_days
SELECT tool_id, toStartOfDay(created_at) AS day, count(), countIf(status = 'success'), sum(duration_ms), sum(ifNull(cost_usd, 0)),
       sumMap(map(duration_bucket, toUInt64(1)))
FROM {db:Identifier}.tool_invocations
WHERE ingested_at < (SELECT min(at) FROM {db:Identifier}.window_aggregates_cutover)
GROUP BY tool_id, day;

INSERT INTO {db:Identifier}.tool_durations
SELECT tool_id, duration_bucket, created_at, duration_ms
FROM {db:Identifier}.tool_invocations
WHERE ingested_at < (SELECT min(at) FROM {db:Identifier}.window_aggregates_cutover);
