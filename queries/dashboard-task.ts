/**
 * Task explorer panels: a task picker, a task's totals, and its workflow DAG as the two frames
 * Grafana's Node Graph reads — nodes (id, title, subtitle, mainstat, secondarystat, arc__*,
 * detail__*) and edges (id, source, target, mainstat, detail__*, thickness). The calls table
 * itself is the API's TASK_INVOCATIONS (queries/by-task.ts).
 */
import { CREATED_IN_WINDOW, PARAM_DOCS } from './dashboard-common.ts';
import type { QuerySpec } from './sql.ts';

const TASK_CALLS = `{db:Identifier}.tool_invocations
WHERE task_id = {task_id:String}
  AND ${CREATED_IN_WINDOW}`;
const TASK_PARAMS = { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, task_id: PARAM_DOCS.task_id };

/** Tasks for a task picker, most recent first, led by ('', '(latest task)'). */
export const TASK_CHOICES: QuerySpec = {
  name: 'task_choices',
  description: "Tasks with calls in the window as (value, text) pairs, most recently active first, led by ('', '(latest task)').",
  sql: `SELECT value, text FROM (
  SELECT '' AS value, '(latest task)' AS text, 0 AS k, toDateTime64(0, 3, 'UTC') AS last
  UNION ALL
  SELECT task_id AS value, concat(task_id, ' (', toString(count()), ' calls)') AS text, 1 AS k, max(created_at) AS last
  FROM {db:Identifier}.tool_invocations
  WHERE ${CREATED_IN_WINDOW} AND task_id != ''
  GROUP BY task_id
)
ORDER BY k, last DESC, value
LIMIT {limit:UInt32}`,
  params: { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, limit: PARAM_DOCS.limit },
};

/** One task's totals. */
export const TASK_SUMMARY: QuerySpec = {
  name: 'task_summary',
  description: "One task's calls, failures, cost, span from first call start to last call end, tools and agents, and its dependency rows.",
  sql: `SELECT
  any(task_id) AS task,
  count() AS calls,
  countIf(status != 'success') AS failures,
  sum(ifNull(cost_usd, 0)) AS total_cost_usd,
  if(count() = 0, NULL, dateDiff('millisecond', min(created_at), max(created_at + toIntervalMillisecond(duration_ms)))) AS span_ms,
  arrayStringConcat(arraySort(groupUniqArray(toString(tool_id))), ', ') AS tools,
  arrayStringConcat(arraySort(groupUniqArray(toString(agent_id))), ', ') AS agents,
  (SELECT uniqExact(preceding_call_id, succeeding_call_id) FROM {db:Identifier}.tool_workflows WHERE task_id = {task_id:String}) AS dependencies
FROM ${TASK_CALLS}`,
  params: TASK_PARAMS,
};

/** Nodes of a task's workflow DAG: one per call. */
export const TASK_DAG_NODES: QuerySpec = {
  name: 'task_dag_nodes',
  description: "Node Graph nodes of one task: each call with its tool (title), status and agent (subtitle), duration (mainstat), cost (secondarystat) and a success/failure arc.",
  sql: `SELECT
  toString(call_id) AS id,
  toString(tool_id) AS title,
  concat(toString(status), ' · ', toString(agent_id)) AS subtitle,
  duration_ms AS mainstat,
  ifNull(cost_usd, 0) AS secondarystat,
  if(status = 'success', 1, 0) AS arc__success,
  if(status = 'success', 0, 1) AS arc__failed,
  toString(created_at) AS detail__created_at,
  ifNull(error, '') AS detail__error
FROM ${TASK_CALLS}
ORDER BY created_at, call_id
LIMIT {limit:UInt32}`,
  params: { ...TASK_PARAMS, limit: PARAM_DOCS.limit },
};

/** Edges of a task's workflow DAG: one per dependency between two of its calls in the window. */
export const TASK_DAG_EDGES: QuerySpec = {
  name: 'task_dag_edges',
  description: 'Node Graph edges of one task: each tool_dependency between two of its calls in the window (mainstat = time_delta_ms); edges that carried data (data_flow) are drawn thicker.',
  sql: `SELECT
  concat(toString(preceding_call_id), '>', toString(succeeding_call_id)) AS id,
  toString(preceding_call_id) AS source,
  toString(succeeding_call_id) AS target,
  time_delta_ms AS mainstat,
  ifNull(data_flow, '') AS detail__data_flow,
  toString(origin) AS detail__origin,
  if(data_flow IS NULL, 1, 4) AS thickness
FROM {db:Identifier}.tool_workflows
WHERE task_id = {task_id:String}
  AND preceding_call_id IN (SELECT call_id FROM ${TASK_CALLS})
  AND succeeding_call_id IN (SELECT call_id FROM ${TASK_CALLS})
ORDER BY preceding_call_id, succeeding_call_id, origin
LIMIT 1 BY preceding_call_id, succeeding_call_id
LIMIT {limit:UInt32}`,
  params: { ...TASK_PARAMS, limit: PARAM_DOCS.limit },
};
