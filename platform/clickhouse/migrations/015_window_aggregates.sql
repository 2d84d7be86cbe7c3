-- Aggregates kept at ingest: the task list, the tools table and the per-tool series
-- read aggregates for the whole days and hours of their window instead of scanning the calls.
--
-- Exact for any window [from, to): whole days and hours come from the aggregates, the partial
-- hours at the edges from the calls themselves through by_created (below), so an edge is a range
-- read of at most two hours. Rows arrive through materialized views of tool_invocations, so every
-- insert path (ingest, replays, SQL backfills) feeds them; derived data, never written by hand.

-- A coarse, monotone bucket of duration_ms (exact below 32 ms, then 12 per octave, 255 from
-- ~3.5 h): the aggregates count calls per bucket, which finds the bucket holding the p95 rank; the
-- exact durations of that bucket alone are then read from tool_durations.
ALTER TABLE {db:Identifier}.tool_invocations
    ADD COLUMN IF NOT EXISTS duration_bucket UInt8
    MATERIALIZED if(duration_ms < 32, toUInt8(duration_ms), toUInt8(least(255, 32 + toUInt32((log2(greatest(duration_ms, 32)) - 5) * 12))))
    COMMENT 'coarse monotone bucket of duration_ms: where the p95 lies';
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE COLUMN duration_bucket;

-- The edges: the columns of the three reads in created_at order (the table's own order is by
-- task, so a time range of it reads every granule). ~17 bytes per call on disk.
ALTER TABLE {db:Identifier}.tool_invocations
    ADD PROJECTION IF NOT EXISTS by_created (
        SELECT created_at, task_id, tool_id, agent_id, status, duration_ms, duration_bucket, cost_usd ORDER BY created_at);
ALTER TABLE {db:Identifier}.tool_invocations MATERIALIZE PROJECTION by_created;

-- Per hour and task: the task list. Unmerged rows of a key are summed by the readers (sum, min,
-- max and the union of agents are what the SimpleAggregateFunctions merge to anyway).
-- Kept a day longer than the calls: an hour is read only while calls of it are stored (readers
-- start at the oldest stored call), so it must never expire before its calls do.
CREATE TABLE IF NOT EXISTS {db:Identifier}.task_hours
(
    hour      DateTime('UTC'),
    task_id   String,
    calls     SimpleAggregateFunction(sum, UInt64),
    failures  SimpleAggregateFunction(sum, UInt64) COMMENT 'status != success',
    cost_usd  SimpleAggregateFunction(sum, Float64) COMMENT 'null cost as 0',
    first_at  SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    last_at   SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
    agents    SimpleAggregateFunction(groupUniqArrayArray, Array(String))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (hour, task_id)
TTL hour + toIntervalDay({invocations_days:UInt32} + 1)
SETTINGS non_replicated_deduplication_window = 10000;

-- Per tool and hour: the tools table (the hours at the edges of a window) and the series.
CREATE TABLE IF NOT EXISTS {db:Identifier}.tool_hours
(
    tool_id         LowCardinality(String),
    hour            DateTime('UTC'),
    calls           SimpleAggregateFunction(sum, UInt64),
    successes       SimpleAggregateFunction(sum, UInt64),
    duration_ms_sum SimpleAggregateFunction(sum, UInt64),
    cost_usd        SimpleAggregateFunction(sum, Float64) COMMENT 'null cost as 0',
    buckets         SimpleAggregateFunction(sumMap, Map(UInt8, UInt64)) COMMENT 'duration_bucket → calls'
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (tool_id, hour)
TTL hour + toIntervalDay({invocations_days:UInt32} + 1)
SETTINGS non_replicated_deduplication_window = 10000;

-- Per tool and day: the tools table (the whole days of a window: 24× fewer rows to merge).
CREATE TABLE IF NOT EXISTS {db:Identifier}.tool_days
(
    tool_id         LowCardinality(String),
    day             DateTime('UTC'),
    calls           SimpleAggregateFunction(sum, UInt64),
    successes       SimpleAggregateFunction(sum, UInt64),
    duration_ms_sum SimpleAggregateFunction(sum, UInt64),
    cost_usd        SimpleAggregateFunction(sum, Float64) COMMENT 'null cost as 0',
    buckets         SimpleAggregateFunction(sumMap, Map(UInt8, UInt64)) COMMENT 'duration_bucket → calls'
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (tool_id, day)
TTL day + toIntervalDay({invocations_days:UInt32} + 2)
SETTINGS non_replicated_deduplication_window = 10000;

-- The durations of one tool's bucket in a window: a key range (~10 bytes per call). A table of
-- its own, not a projection of the calls: ClickHouse 26.7 picks a projection before the read's
-- (tool, bucket) set is known and fell back to by_created over the whole window.
CREATE TABLE IF NOT EXISTS {db:Identifier}.tool_durations
(
    tool_id         LowCardinality(String),
    duration_bucket UInt8,
    created_at      DateTime64(3, 'UTC'),
    duration_ms     UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(created_at)
ORDER BY (tool_id, duration_bucket, created_at)
TTL toDateTime(created_at) + toIntervalDay({invocations_days:UInt32} + 1);

-- The views count the calls ingested from the cutover on, 017 those ingested before: each call
-- once, by its ingested_at, whatever inserts run meanwhile. Empty until migrate.ts sets it
-- (platform/clickhouse/cutover.ts), which counts as never: the views count nothing until then.
CREATE TABLE IF NOT EXISTS {db:Identifier}.window_aggregates_cutover (at DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY tuple();

CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.task_hours_mv TO {db:Identifier}.task_hours AS
SELECT toStartOfHour(created_at) AS hour, task_id, count() AS calls, countIf(status != 'success') AS failures,
       sum(ifNull(cost_usd, 0)) AS cost_usd, min(created_at) AS first_at, max(created_at) AS last_at,
       groupUniqArray(toString(agent_id)) AS agents
FROM {db:Identifier}.tool_invocations
WHERE task_id != '' AND ingested_at >= (SELECT if(count() = 0, toDateTime64('2299-12-31 23:59:59', 3, 'UTC'), min(at)) FROM {db:Identifier}.window_aggregates_cutover)
GROUP BY hour, task_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.tool_hours_mv TO {db:Identifier}.tool_hours AS
SELECT tool_id, toStartOfHour(created_at) AS hour, count() AS calls, countIf(status = 'success') AS successes,
       sum(duration_ms) AS duration_ms_sum, sum(ifNull(cost_usd, 0)) AS cost_usd, sumMap(map(duration_bucket, toUInt64(1))) AS buckets
FROM {db:Identifier}.tool_invocations
WHERE ingested_at >= (SELECT if(count() = 0, toDateTime64('2299-12-31 23:59:59', 3, 'UTC'), min(at)) FROM {db:Identifier}.window_aggregates_cutover)
GROUP BY tool_id, hour;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.tool_days_mv TO {db:Identifier}.tool_days AS
SELECT tool_id, toStartOfDay(created_at) AS day, count() AS calls, countIf(status = 'success') AS successes,
       sum(duration_ms) AS duration_ms_sum, sum(ifNull(cost_usd, 0)) AS cost_usd, sumMap(map(duration_bucket, toUInt64(1))) AS buckets
FROM {db:Identifier}.tool_invocations
WHERE ingested_at >= (SELECT if(count() = 0, toDateTime64('2299-12-31 23:59:59', 3, 'UTC'), min(at)) FROM {db:Identifier}.window_aggregates_cutover)
GROUP BY tool_id, day;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.tool_durations_mv TO {db:Identifier}.tool_durations AS
SELECT tool_id, duration_bucket, created_at, duration_ms
FROM {db:Identifier}.tool_invocations
WHERE ingested_at >= (SELECT if(count() = 0, toDateTime64('2299-12-31 23:59:59', 3, 'UTC'), min(at)) FROM {db:Identifier}.window_aggregates_cutover);
