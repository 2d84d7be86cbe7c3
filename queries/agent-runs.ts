/**
 * A task's agent runs, as the task view serves them, and the task's name: its outermost run's.
 * The outermost run is the first to start (created_at − duration_ms); of runs starting together,
 * the longest; then the lowest run_id — the same rule in the statements here and in
 * {@link runViews}, so the task list and the task view name a task alike.
 */
import type { AgentRunView } from '../schemas/answers.ts';
import { isoTime, type QuerySpec } from './sql.ts';

/** SELECT list of a run (created_at in ms). */
export const RUN_COLUMNS = `toString(run_id) AS run_id, agent_id, name, duration_ms, status, error, trace_id, span_id, parent_span_id,
  toUnixTimestamp64Milli(created_at) AS created_ms`;

/** Runs of one task the view serves at most. */
export const RUNS_PER_TASK = 1000;

/** The order key of a run in SQL, outermost first (see the module's rule). */
const OUTERMOST = '(toUnixTimestamp64Milli(created_at) - toInt64(duration_ms), -toInt64(duration_ms), toString(run_id))';

/** A task's runs, outermost first (one per run_id). */
export const TASK_RUNS: QuerySpec = {
  name: 'task_runs',
  description: "One task's agent runs, in the order they started (the outermost first).",
  sql: `SELECT ${RUN_COLUMNS}
FROM {db:Identifier}.agent_runs
WHERE task_id = {task_id:String}
ORDER BY ${OUTERMOST}
LIMIT 1 BY run_id
LIMIT {limit:UInt32}`,
  params: { db: 'the database', task_id: 'the task', limit: 'runs at most' },
  settings: { max_threads: 1 },
};

/** The name of each listed task: its outermost run's (tasks without a run are absent). */
export const TASK_NAMES: QuerySpec = {
  name: 'task_names',
  description: 'Per listed task with an agent run: the name of its outermost run.',
  sql: `SELECT task_id, argMin(name, ${OUTERMOST}) AS name
FROM {db:Identifier}.agent_runs
WHERE task_id IN {tasks:Array(String)}
GROUP BY task_id`,
  params: { db: 'the database', tasks: 'the task ids the list holds' },
};

/** A run as read. */
export interface RunReadRow {
  run_id: string;
  agent_id: string;
  name: string;
  duration_ms: number | string;
  status: 'success' | 'error';
  error: string | null;
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  created_ms: number | string;
}

const startOf = (r: RunReadRow) => Number(r.created_ms) - Number(r.duration_ms);

/** Outermost first: earliest start, then longest, then run_id (as {@link TASK_RUNS} orders). */
export function runOrder(a: RunReadRow, b: RunReadRow): number {
  return startOf(a) - startOf(b) || Number(b.duration_ms) - Number(a.duration_ms) || (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0);
}

/** The served runs (one per run_id, outermost first, at most {@link RUNS_PER_TASK}) and the task's name and agent. Pure. */
export function runViews(rows: readonly RunReadRow[]): { name: string | null; agent_id: string | null; runs: AgentRunView[] } {
  const byId = new Map(rows.map((r) => [r.run_id, r]));
  const runs = [...byId.values()].sort(runOrder).slice(0, RUNS_PER_TASK);
  const first = runs[0];
  return {
    name: first?.name ?? null,
    agent_id: first?.agent_id ?? null,
    runs: runs.map((r) => ({
      run_id: r.run_id,
      agent_id: r.agent_id,
      name: r.name,
      started_at: isoTime(startOf(r)),
      duration_ms: Number(r.duration_ms),
      status: r.status,
      error: r.error,
      trace_id: r.trace_id || null,
      span_id: r.span_id || null,
      parent_span_id: r.parent_span_id || null,
      created_at: isoTime(r.created_ms),
    })),
  };
}
