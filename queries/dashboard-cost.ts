/**
 * Cost panels: where the money goes, by tool, agent and task. Costs are summed with a missing
 * cost_usd as 0 (as the API's total_cost_usd); `expensive` is cost_usd > threshold_usd (SPEC §1).
 * `tool_id` / `agent_id` '' mean every tool / agent.
 */
import { AGENT_FILTER, bucketOf, CREATED_IN_WINDOW, PARAM_DOCS, TOOL_FILTER } from './dashboard-common.ts';
import type { QuerySpec } from './sql.ts';
import { taskWindowRows, toolWindowRows, WINDOW_BOUNDS } from './window-aggregates.ts';

const FROM = `FROM {db:Identifier}.tool_invocations
WHERE ${CREATED_IN_WINDOW}
  AND ${TOOL_FILTER}
  AND ${AGENT_FILTER}`;
const FILTER_PARAMS = { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, tool_id: PARAM_DOCS.tool_id, agent_id: PARAM_DOCS.agent_id };

/** Agents seen in the window, for an agent picker: value '' (every agent) first. */
export const AGENT_CHOICES: QuerySpec = {
  name: 'agent_choices',
  description: "Agents with calls in the window as (value, text) pairs, led by ('', 'All agents').",
  sql: `SELECT value, text FROM (
  SELECT '' AS value, 'All agents' AS text
  UNION ALL
  SELECT DISTINCT toString(agent_id) AS value, toString(agent_id) AS text
  FROM {db:Identifier}.tool_invocations
  WHERE ${CREATED_IN_WINDOW}
)
ORDER BY value != '', value`,
  params: { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to },
};

/** Every tool and every agent chosen: the panel may read the window aggregates. */
const ALL_CHOSEN = `({tool_id:String} = '' AND {agent_id:String} = '')`;

/** Cost totals over the window. */
export const COST_TOTALS: QuerySpec = {
  name: 'cost_totals',
  description: 'Total cost, number and cost of expensive calls, tasks and average cost per task over the window.',
  // With every tool and agent (the defaults) the total and the tasks come from the window
  // aggregates (whole days and hours) and the window's edge calls, and only the calls above the
  // threshold are read for the expensive ones; a chosen tool or agent reads the calls (the
  // aggregates hold no agent). Each arm is one row, so the answer is the row of the arm in use.
  sql: `WITH ${WINDOW_BOUNDS}
SELECT total_cost_usd, expensive_calls, expensive_cost_usd, tasks, avg_cost_per_task_usd FROM (
  SELECT 'aggregates' AS arm,
    (SELECT sum(c) FROM (${toolWindowRows('cost_usd AS c', 'sum(ifNull(cost_usd, 0))', ALL_CHOSEN)})) AS total_cost_usd,
    e.expensive_calls AS expensive_calls, e.expensive_cost_usd AS expensive_cost_usd, t.tasks AS tasks,
    if(t.tasks = 0, NULL, t.cost / t.tasks) AS avg_cost_per_task_usd
  FROM (
    SELECT count() AS expensive_calls, sum(assumeNotNull(cost_usd)) AS expensive_cost_usd
    FROM {db:Identifier}.tool_invocations WHERE ${CREATED_IN_WINDOW} AND cost_usd > {threshold_usd:Float64} AND ${ALL_CHOSEN}) AS e
  CROSS JOIN (
    SELECT uniqExact(task_id) AS tasks, sum(cost) AS cost FROM (${taskWindowRows('1', ALL_CHOSEN)})) AS t
  UNION ALL
  SELECT 'calls',
    sum(ifNull(cost_usd, 0)) AS total_cost_usd,
    countIf(cost_usd > {threshold_usd:Float64}) AS expensive_calls,
    sumIf(assumeNotNull(cost_usd), cost_usd > {threshold_usd:Float64}) AS expensive_cost_usd,
    uniqExactIf(task_id, task_id != '') AS tasks,
    if(tasks = 0, NULL, sumIf(ifNull(cost_usd, 0), task_id != '') / tasks) AS avg_cost_per_task_usd
  ${FROM}
    AND NOT (${ALL_CHOSEN}))
WHERE arm = if(${ALL_CHOSEN}, 'aggregates', 'calls')`,
  params: { ...FILTER_PARAMS, threshold_usd: PARAM_DOCS.threshold_usd },
};

/** Most expensive tools. */
export const COST_BY_TOOL: QuerySpec = {
  name: 'cost_by_tool',
  description: 'Per tool: total, average and maximum cost and calls, most expensive first.',
  sql: `SELECT
  toString(tool_id) AS tool_id,
  sum(ifNull(cost_usd, 0)) AS total_cost_usd,
  count() AS calls,
  avg(ifNull(cost_usd, 0)) AS avg_cost_usd,
  max(ifNull(cost_usd, 0)) AS max_cost_usd
${FROM}
GROUP BY tool_id
ORDER BY total_cost_usd DESC, tool_id
LIMIT {limit:UInt32}`,
  params: { ...FILTER_PARAMS, limit: PARAM_DOCS.limit },
};

/** Most expensive agents. */
export const COST_BY_AGENT: QuerySpec = {
  name: 'cost_by_agent',
  description: 'Per agent: total and average cost, calls, distinct tools and the tool it spent most on, most expensive first.',
  sql: `SELECT
  toString(agent_id) AS agent_id,
  sum(ifNull(cost_usd, 0)) AS total_cost_usd,
  count() AS calls,
  avg(ifNull(cost_usd, 0)) AS avg_cost_usd,
  uniqExact(tool_id) AS tools,
  toString(argMax(tool_id, ifNull(cost_usd, 0))) AS priciest_tool
${FROM}
GROUP BY agent_id
ORDER BY total_cost_usd DESC, agent_id
LIMIT {limit:UInt32}`,
  params: { ...FILTER_PARAMS, limit: PARAM_DOCS.limit },
};

/** The window's tasks with their sums, most expensive first: task_hours for its whole hours, its edge calls read (window-aggregates.ts). */
const TASK_SUMS = `SELECT task_id, sum(cost) AS total_cost_usd, sum(n) AS calls, sum(failed) AS failures, min(first_at) AS first_call, max(last_at) AS last_call
    FROM (${taskWindowRows('1', ALL_CHOSEN)})
    GROUP BY task_id
    ORDER BY total_cost_usd DESC, task_id
    LIMIT {limit:UInt32}`;

/** Cost of each task. */
export const COST_PER_TASK: QuerySpec = {
  name: 'cost_per_task',
  description: 'Per task (calls with a task_id): total cost, calls, failures, tools used, first and last call, most expensive first.',
  // With every tool and agent (the default) the sums come from the window aggregates, as the task
  // list's, and only the listed tasks' calls are read for their tools (the table is ordered by
  // task): 0.7–1.3 s → 0.14–0.2 s over 30 days at 10 M calls. A chosen tool or agent is not in
  // task_hours: then the window's calls are read, as before.
  sql: `WITH ${WINDOW_BOUNDS},
  -- The listed tasks, summed once: (task_id, total_cost_usd, calls, failures, first_call, last_call).
  (SELECT groupArray((task_id, total_cost_usd, calls, failures, first_call, last_call)) FROM (${TASK_SUMS})) AS listed
SELECT task_id, total_cost_usd, calls, failures, tools, first_call, last_call FROM (
  SELECT t.r.1 AS task_id, t.r.2 AS total_cost_usd, t.r.3 AS calls, t.r.4 AS failures, tl.tools AS tools, t.r.5 AS first_call, t.r.6 AS last_call
  FROM (SELECT arrayJoin(listed) AS r) AS t
  LEFT JOIN (
    SELECT task_id, arrayStringConcat(arraySort(groupUniqArray(toString(tool_id))), ', ') AS tools
    FROM {db:Identifier}.tool_invocations
    WHERE task_id IN (SELECT arrayJoin(arrayMap(x -> x.1, listed))) AND ${CREATED_IN_WINDOW}
    GROUP BY task_id) AS tl ON tl.task_id = t.r.1
  UNION ALL
  SELECT
    task_id,
    sum(ifNull(cost_usd, 0)) AS total_cost_usd,
    count() AS calls,
    countIf(status != 'success') AS failures,
    arrayStringConcat(arraySort(groupUniqArray(toString(tool_id))), ', ') AS tools,
    min(created_at) AS first_call,
    max(created_at) AS last_call
  ${FROM}
    AND task_id != '' AND NOT (${ALL_CHOSEN})
  GROUP BY task_id)
ORDER BY total_cost_usd DESC, task_id
LIMIT {limit:UInt32}`,
  params: { ...FILTER_PARAMS, limit: PARAM_DOCS.limit },
};

/** Cost per agent and time bucket. */
export const COST_BY_AGENT_OVER_TIME: QuerySpec = {
  name: 'cost_by_agent_over_time',
  description: 'Sum of cost_usd in each time bucket, one series per agent (long format: time, agent_id, value).',
  sql: `SELECT ${bucketOf('created_at')} AS time, toString(agent_id) AS agent_id, sum(ifNull(cost_usd, 0)) AS cost_usd
${FROM}
GROUP BY time, agent_id
ORDER BY time, agent_id`,
  params: { ...FILTER_PARAMS, bucket_s: PARAM_DOCS.bucket_s },
};

/** Model turns per model: what the model turns around the calls cost (the selected agent's, or all). */
export const MODEL_COST_BY_MODEL: QuerySpec = {
  name: 'model_cost_by_model',
  description: 'Per model: model turns, tokens in / out / read from cache, cost and turns without a known cost, most costly first (the model turns, read through their by_created projection).',
  sql: `SELECT
  toString(model) AS model,
  count() AS turns,
  sum(ifNull(input_tokens, 0)) AS tokens_in,
  sum(ifNull(output_tokens, 0)) AS tokens_out,
  sum(ifNull(cached_input_tokens, 0)) AS tokens_cached,
  sum(ifNull(cost_usd, 0)) AS model_cost_usd,
  countIf(cost_usd IS NULL) AS unpriced_turns
FROM {db:Identifier}.model_turns
WHERE ${CREATED_IN_WINDOW}
  AND ${AGENT_FILTER}
GROUP BY model
ORDER BY model_cost_usd DESC, model
LIMIT {limit:UInt32}`,
  params: { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, agent_id: PARAM_DOCS.agent_id, limit: PARAM_DOCS.limit },
};
