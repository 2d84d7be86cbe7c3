/**
 * Budget panels: each budget of the set in force with its spend against its limit in
 * the current UTC period (computed from the stored calls as the API's spent_usd, without the
 * reservations only the serving process knows), and the warn and deny decisions of budget checks.
 */
import { bucketOf, inWindow, PARAM_DOCS } from './dashboard-common.ts';
import type { QuerySpec } from './sql.ts';

/** Spend vs limit per budget, current UTC period. */
export const BUDGET_SPEND_VS_LIMIT: QuerySpec = {
  name: 'budget_spend_vs_limit',
  description:
    "Each budget in force (newest budget_versions row) with SUM(cost_usd) of the stored calls (and model turns, when its scope's costs count them) in its scope and current UTC day or month, its limit and the share used. A scope field '' matches any value.",
  sql: `WITH
  set AS (
    SELECT JSONExtractString(b, 'budget_id') AS budget_id, JSONExtractString(b, 'mode') AS mode, JSONExtractString(b, 'period') AS period,
      JSONExtractFloat(b, 'limit_usd') AS limit_usd, JSONExtractString(b, 'scope', 'agent_id') AS s_agent,
      JSONExtractString(b, 'scope', 'tool_id') AS s_tool, JSONExtractString(b, 'scope', 'task_id') AS s_task,
      if(JSONExtractString(b, 'scope', 'costs') IN ('models', 'all'), 1, 0) AS s_models, if(JSONExtractString(b, 'scope', 'costs') = 'models', 0, 1) AS s_tools
    FROM (SELECT budgets FROM {db:Identifier}.budget_versions ORDER BY version DESC LIMIT 1)
    ARRAY JOIN JSONExtractArrayRaw(budgets) AS b
  ),
  -- What the budgets name. A call's agent, tool or task that no budget names is counted as '',
  -- which only a budget matching any value matches: the cells are as few as the scopes whatever
  -- is stored, and with no budget in force no call is read.
  named AS (SELECT groupUniqArray(s_agent) AS agents, groupUniqArray(s_tool) AS tools, groupUniqArray(s_task) AS tasks, count() AS budgets FROM set),
  cells AS (
    -- Grouped first by the calls' own LowCardinality ids (and the task only where a budget names
    -- it), then mapped to what the budgets name: a string per call cost 2.8× the time at 10 M calls.
    -- A call without a cost adds nothing to any sum, so it is not read (two calls in three there).
    SELECT 'tool' AS kind, if(has((SELECT agents FROM named), a), a, '') AS c_agent, if(has((SELECT tools FROM named), t), t, '') AS c_tool,
      c_task, day, sum(c) AS cost
    FROM (
      SELECT toString(agent_id) AS a, toString(tool_id) AS t, c_task, day, c FROM (
        SELECT agent_id, tool_id, if(has((SELECT tasks FROM named), task_id), task_id, '') AS c_task, toDate(created_at, 'UTC') AS day, sum(ifNull(cost_usd, 0)) AS c
        FROM {db:Identifier}.tool_invocations
        WHERE created_at >= toStartOfMonth(now64(3, 'UTC')) AND ifNull(cost_usd, 0) != 0 AND (SELECT budgets FROM named) > 0
        GROUP BY agent_id, tool_id, c_task, day))
    GROUP BY c_agent, c_tool, c_task, day
    -- model turns have no tool: a budget scoped to a tool never counts them
    UNION ALL SELECT 'model', if(has((SELECT agents FROM named), toString(agent_id)), toString(agent_id), '') AS c_agent, '',
      if(has((SELECT tasks FROM named), task_id), task_id, '') AS c_task, toDate(created_at, 'UTC') AS day, sum(ifNull(cost_usd, 0))
    FROM {db:Identifier}.model_turns
    WHERE created_at >= toStartOfMonth(now64(3, 'UTC')) AND ifNull(cost_usd, 0) != 0 AND (SELECT budgets FROM named) > 0
    GROUP BY c_agent, c_task, day
    -- a row matching nothing, so that every budget has a row when no call is stored yet
    UNION ALL SELECT 'none', '', '', '', toDate('1970-01-01'), 0
  )
SELECT budget_id, mode, period, limit_usd,
  sumIf(cost, (kind = 'tool' AND s_tools = 1 OR kind = 'model' AND s_models = 1) AND (s_agent = '' OR s_agent = c_agent) AND (s_tool = '' OR s_tool = c_tool) AND (s_task = '' OR s_task = c_task)
    AND day >= if(period = 'day', toDate(now('UTC'), 'UTC'), toStartOfMonth(toDate(now('UTC'), 'UTC')))) AS spent_usd,
  if(limit_usd = 0, NULL, spent_usd / limit_usd) AS used
FROM set CROSS JOIN cells
GROUP BY budget_id, mode, period, limit_usd
ORDER BY used DESC, budget_id`,
  params: { db: PARAM_DOCS.db },
};

/** Warn and deny decisions per time bucket. */
export const BUDGET_DECISIONS_OVER_TIME: QuerySpec = {
  name: 'budget_decisions_over_time',
  description: 'Budget check decisions that were warn or deny, per time bucket and decision (long format: time, decision, value).',
  sql: `SELECT ${bucketOf('decided_at')} AS time, toString(decision) AS decision, count() AS decisions
FROM {db:Identifier}.budget_decisions
WHERE ${inWindow('decided_at')} AND decision IN ('warn', 'deny')
GROUP BY time, decision
ORDER BY time, decision`,
  params: { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, bucket_s: PARAM_DOCS.bucket_s },
};

/** The latest warn and deny decisions. */
export const BUDGET_RECENT_DENIALS: QuerySpec = {
  name: 'budget_recent_denials',
  description: 'The latest warn and deny decisions in the window, newest first: who asked for which tool, the projected cost and the budgets that were over.',
  sql: `SELECT toUnixTimestamp64Milli(decided_at) AS decided_ms, toString(decision) AS decision, toString(agent_id) AS agent_id, toString(tool_id) AS tool_id,
  task_id, projected_cost_usd,
  arrayStringConcat(arrayMap(x -> JSONExtractString(x, 'budget_id'),
    arrayFilter(x -> JSONExtractFloat(x, 'spent_usd') + JSONExtractFloat(x, 'reserved_usd') + projected_cost_usd > JSONExtractFloat(x, 'limit_usd'), JSONExtractArrayRaw(budgets))), ', ') AS over_budgets
FROM {db:Identifier}.budget_decisions
WHERE ${inWindow('decided_at')} AND decision IN ('warn', 'deny')
ORDER BY decided_at DESC, decision_id DESC
LIMIT {limit:UInt32}`,
  params: { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, limit: PARAM_DOCS.limit },
};
