/**
 * Workflow panels beyond the API's common sequences: which tool follows which. A transition is
 * two consecutive calls of one task (call order: created_at, then call_id), the way an agent
 * chains tools; dependency pairs (tool_workflows) add how long the hand-over took and whether
 * data visibly flowed.
 */
import { CREATED_IN_WINDOW, PARAM_DOCS } from './dashboard-common.ts';
import type { QuerySpec } from './sql.ts';

const WINDOW_PARAMS = { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to };

/** Consecutive (previous tool, tool) pairs of the calls of each task in the window. */
const CONSECUTIVE = `SELECT prev_tool, tool, gap_ms FROM (
    SELECT
      toString(tool_id) AS tool,
      lagInFrame(toString(tool_id)) OVER w AS prev_tool,
      dateDiff('millisecond', lagInFrame(created_at) OVER w, created_at) AS gap_ms,
      row_number() OVER w AS rn
    FROM {db:Identifier}.tool_invocations
    WHERE ${CREATED_IN_WINDOW} AND task_id != ''
    WINDOW w AS (PARTITION BY task_id ORDER BY created_at, call_id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
  )
  WHERE rn > 1`;

/** Node Graph nodes: the tools. */
export const TOOL_GRAPH_NODES: QuerySpec = {
  name: 'tool_graph_nodes',
  description: 'Node Graph nodes of the tool-transition graph: each tool with calls in the window (mainstat = calls, secondarystat = success rate, arc = success/failure share).',
  sql: `SELECT
  toString(tool_id) AS id,
  toString(tool_id) AS title,
  count() AS mainstat,
  countIf(status = 'success') / count() AS secondarystat,
  countIf(status = 'success') / count() AS arc__success,
  countIf(status != 'success') / count() AS arc__failed
FROM {db:Identifier}.tool_invocations
WHERE ${CREATED_IN_WINDOW} AND task_id != ''
GROUP BY tool_id
ORDER BY mainstat DESC, id
LIMIT {limit:UInt32}`,
  params: { ...WINDOW_PARAMS, limit: PARAM_DOCS.limit },
};

/** Node Graph edges: consecutive-call transitions between tools. */
export const TOOL_GRAPH_EDGES: QuerySpec = {
  name: 'tool_graph_edges',
  description: 'Node Graph edges of the tool-transition graph: how often a call of one tool was directly followed by a call of another in the same task (mainstat = transitions, secondarystat = median gap ms).',
  sql: `SELECT
  concat(prev_tool, '>', tool) AS id,
  prev_tool AS source,
  tool AS target,
  count() AS mainstat,
  quantileExact(0.5)(gap_ms) AS secondarystat
FROM (${CONSECUTIVE})
GROUP BY prev_tool, tool
ORDER BY mainstat DESC, id
LIMIT {limit:UInt32}`,
  params: { ...WINDOW_PARAMS, limit: PARAM_DOCS.limit },
};

/** Dependency pairs per tool pair. */
export const DEPENDENCY_PAIRS_BY_TOOL: QuerySpec = {
  name: 'dependency_pairs_by_tool',
  description: 'Dependency pairs of calls in the window (one per pair, the emitted row before the analyzer\'s) per (preceding tool, succeeding tool): pairs, average and p95 time_delta_ms, pairs with a data flow, and how many the analyzer linked.',
  sql: `SELECT
  toString(preceding_tool_id) AS from_tool,
  toString(succeeding_tool_id) AS to_tool,
  count() AS pairs,
  avg(time_delta_ms) AS avg_delta_ms,
  quantileExactInclusive(0.95)(time_delta_ms) AS p95_delta_ms,
  countIf(data_flow IS NOT NULL) AS with_data_flow,
  countIf(origin = 'analyzer') AS linked_by_analyzer
FROM (
  -- One row per pair: an emitted row supersedes the analyzer's. Ordered by the task first, as
  -- the table is, so the rows are read in order rather than all sorted. A pair's rows name its
  -- calls' task; one stored under two tasks (an emitted row naming another, which ingest cannot
  -- check) keeps its row of the smaller task_id.
  SELECT task_id, preceding_tool_id, succeeding_tool_id, time_delta_ms, data_flow, origin
  FROM {db:Identifier}.tool_workflows
  WHERE task_id IN (SELECT DISTINCT task_id FROM {db:Identifier}.tool_invocations WHERE ${CREATED_IN_WINDOW} AND task_id != '')
    AND preceding_call_id IN (SELECT call_id FROM {db:Identifier}.tool_invocations WHERE ${CREATED_IN_WINDOW})
  ORDER BY task_id, preceding_call_id, succeeding_call_id, origin
  LIMIT 1 BY preceding_call_id, succeeding_call_id)
GROUP BY from_tool, to_tool
ORDER BY pairs DESC, from_tool, to_tool
LIMIT {limit:UInt32}
-- A larger set (a month's calls: millions) filters the rows as they are read instead of being
-- analysed against the primary key value by value first: with both changes, 50–56 s → 8 s over
-- 30 days at 10 M calls, 8 s → 2.6 s over 7 days, the same at 6 hours (docs/benchmarks.md).
SETTINGS use_index_for_in_with_subqueries_max_values = 10000`,
  params: { ...WINDOW_PARAMS, limit: PARAM_DOCS.limit },
};

