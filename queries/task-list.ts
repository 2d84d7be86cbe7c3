/**
 * Recent tasks (GET /v1/tasks): one row per task with calls in the window — its calls, failed
 * calls, total cost, its model turns' tokens and cost, its name (agent-runs.ts), agents and
 * first/last call — most recently
 * active first. The web app's task
 * list; the Cost dashboard's "cost per task" panel is the same aggregation ordered by cost.
 */
import { TASK_NAMES } from './agent-runs.ts';
import type { TaskList } from '../schemas/answers.ts';
import { EDGE_CALLS, taskWindowRows, WHOLE_HOURS, WINDOW_BOUNDS } from './window-aggregates.ts';
import { isoTime, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type StatementRunner, type TimeWindow } from './sql.ts';

/** The window's edge calls (partial hours) of tasks. */
const EDGE_TASK_CALLS = `FROM {db:Identifier}.tool_invocations WHERE ${EDGE_CALLS} AND task_id != ''`;

/**
 * Tasks of the window, newest activity first: the whole hours from `task_hours`, the edges from
 * the calls (queries/window-aggregates.ts); the same answer as grouping the window's calls.
 *
 * Only candidate tasks are summed. `cut` is the hour of the `limit`-th distinct task met reading
 * whole hours newest first (the key order, so a short read): `limit` tasks have a call at or after
 * `cut`, so a task whose whole hours all lie before it (and with no edge call) ends before every
 * one of them and cannot be listed — ties included. With fewer tasks, `cut` is the oldest of their
 * newest hours and every task is a candidate. The candidates' figures are then exact.
 */
export const TASK_LIST: QuerySpec = {
  name: 'task_list',
  description: 'Per task with calls in the window: calls, failed calls, total cost (null cost as 0), agents, first and last call; last call descending, then task_id.',
  sql: `WITH ${WINDOW_BOUNDS},
  (SELECT min(hour) FROM (
    SELECT task_id, hour FROM {db:Identifier}.task_hours WHERE ${WHOLE_HOURS} ORDER BY hour DESC LIMIT 1 BY task_id LIMIT {limit:UInt32}
  )) AS cut
SELECT task_id, sum(n) AS calls, sum(failed) AS failures, sum(cost) AS total_cost_usd,
  arraySort(groupUniqArrayArray(agent_ids)) AS agents,
  toUnixTimestamp64Milli(min(first_at)) AS first_ms, toUnixTimestamp64Milli(max(last_at)) AS last_ms
FROM (
  ${taskWindowRows(`task_id IN (
    SELECT task_id FROM {db:Identifier}.task_hours WHERE hour >= cut AND hour < h_hi
    UNION DISTINCT SELECT task_id ${EDGE_TASK_CALLS})`)}
)
GROUP BY task_id
ORDER BY last_ms DESC, task_id
LIMIT {limit:UInt32}`,
  params: { ...WINDOW_PARAM_DOCS, limit: 'tasks to return at most' },
};

/**
 * The model turns of listed tasks in the window: a read of the turns' key ranges (model_turns is
 * ordered by task), so its cost follows the page's tasks, not what is stored.
 */
export const TASK_LIST_TURNS: QuerySpec = {
  name: 'task_list_turns',
  description: 'Per listed task: its model turns in the window, their input and output tokens and cost (a turn without a cost counts 0).',
  sql: `SELECT task_id, count() AS turns, sum(ifNull(input_tokens, 0)) AS in_tokens, sum(ifNull(output_tokens, 0)) AS out_tokens, sum(ifNull(cost_usd, 0)) AS cost
FROM {db:Identifier}.model_turns
WHERE task_id IN {tasks:Array(String)} AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
GROUP BY task_id`,
  params: { ...WINDOW_PARAM_DOCS, tasks: 'the task ids the list holds' },
};

/** Parameters of {@link taskList}. */
export interface TaskListParams {
  window: TimeWindow;
  limit: number;
}

interface Row {
  task_id: string;
  calls: number;
  failures: number;
  total_cost_usd: number;
  agents: string[];
  first_ms: number;
  last_ms: number;
}

interface TurnRow {
  task_id: string;
  turns: string | number;
  in_tokens: string | number;
  out_tokens: string | number;
  cost: number;
}

/** Runs the task list: the tasks, then the model turns and names of those listed (side by side). */
export async function taskList(ch: StatementRunner, db: string, p: TaskListParams, ctx: QueryContext): Promise<TaskList> {
  const window = windowParams(p.window);
  const rows = await runQuery<Row>(ch, TASK_LIST, { db, ...window, limit: p.limit }, ctx);
  const tasks = rows.map((r) => r.task_id);
  const [turns, names] = rows.length
    ? await Promise.all([runQuery<TurnRow>(ch, TASK_LIST_TURNS, { db, ...window, tasks }, ctx), runQuery<{ task_id: string; name: string }>(ch, TASK_NAMES, { db, tasks }, ctx)])
    : [[], []];
  const turnsOf = new Map(turns.map((t) => [t.task_id, t]));
  const nameOf = new Map(names.map((n) => [n.task_id, n.name]));
  return {
    tasks: rows.map((r) => {
      const t = turnsOf.get(r.task_id);
      return {
        task_id: r.task_id,
        name: nameOf.get(r.task_id) ?? null,
        calls: Number(r.calls),
        failures: Number(r.failures),
        total_cost_usd: Number(r.total_cost_usd),
        model_turns: Number(t?.turns ?? 0),
        model_input_tokens: Number(t?.in_tokens ?? 0),
        model_output_tokens: Number(t?.out_tokens ?? 0),
        model_cost_usd: Number(t?.cost ?? 0),
        agents: r.agents,
        first_call: isoTime(r.first_ms),
        last_call: isoTime(r.last_ms),
      };
    }),
  };
}
