/**
 * ByTask (SPEC §5, GET /v1/tasks/{task_id}): a task's calls in call order, the dependencies and
 * outputs of those calls, and the workflow DAG they form. One task's calls are one primary-key
 * range of tool_invocations (ORDER BY task_id, created_at, call_id), its dependencies one range
 * of tool_workflows (ORDER BY task_id, …).
 */
import { z } from 'zod';
import { RawJson } from '../schemas/raw-json.ts';
import { cursorCodec, msKey, uuidKey } from './cursor.ts';
import { DEPENDENCY_COLUMNS, TASK_INVOCATION_COLUMNS, OUTPUT_COLUMNS, toDependency, toInvocation, toOutput, type InvocationReadRow, type OutputReadRow } from './rows.ts';
import type { Dependency, TaskView } from '../schemas/answers.ts';
import { OrphanCallIds, orphanLoader } from './orphan-call-ids.ts';
import { linkTurns, TASK_TURNS, type TurnReadRow } from './model-turns.ts';
import { RUNS_PER_TASK, runViews, TASK_RUNS, type RunReadRow } from './agent-runs.ts';
import { outputOrder, pageFromTaskRows, TASK_ROWS, TASK_ROWS_CAP, type TaskCursor, type TaskPage, type TaskRow } from './task-rows.ts';
import { chTime, pageOf, PAGE_PARAM_DOCS, runQuery, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

// One page of a task's calls: a primary-key range, in key order.
const PAGE_WHERE = `task_id = {task_id:String}
  AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND (NOT {has_cursor:Bool} OR (created_at, call_id) > ({c_at:DateTime64(3, 'UTC')}, {c_id:UUID}))`;
const PAGE_PARAMS = {
  ...WINDOW_PARAM_DOCS,
  ...PAGE_PARAM_DOCS,
  task_id: 'the task',
  c_at: 'created_at of the last call of the previous page',
  c_id: 'call_id of the last call of the previous page',
};
const DEPENDENCIES_OF = (calls: string) => `SELECT ${DEPENDENCY_COLUMNS}
FROM {db:Identifier}.tool_workflows
WHERE task_id = {task_id:String}
  AND (preceding_call_id IN ${calls} OR succeeding_call_id IN ${calls})
ORDER BY preceding_call_id, succeeding_call_id, origin
LIMIT 1 BY preceding_call_id, succeeding_call_id`;
const OUTPUTS_OF = (calls: string) => `SELECT ${OUTPUT_COLUMNS}
FROM {db:Identifier}.tool_outputs
WHERE call_id IN ${calls}
ORDER BY created_at, output_id`;
// Outputs are served by the by_call_id projection (migrations 002/004: sorted by call_id, 32-row
// granules). The planner compares marks, and one bloom-filtered 8192-row mark of the table looks
// as cheap as one 32-row mark of the projection, which reads ~100x less: skip indexes off.
const OUTPUT_SETTINGS = { use_skip_indexes: 0 };

/** The task's calls in call order, one page. */
export const TASK_INVOCATIONS: QuerySpec = {
  name: 'task_invocations',
  description: "One task's invocations in call order (created_at, then call_id).",
  sql: `SELECT ${TASK_INVOCATION_COLUMNS}
FROM {db:Identifier}.tool_invocations
WHERE ${PAGE_WHERE}
ORDER BY created_at, call_id
LIMIT {limit:UInt32}`,
  params: PAGE_PARAMS,
  settings: { max_threads: 1 },
};

/** Dependencies of a task that touch the given calls. */
export const TASK_DEPENDENCIES: QuerySpec = {
  name: 'task_dependencies',
  description: 'tool_workflows rows of a task whose preceding or succeeding call is among call_ids (one row per pair).',
  sql: DEPENDENCIES_OF('{call_ids:Array(UUID)}'),
  params: { db: WINDOW_PARAM_DOCS.db, task_id: 'the task', call_ids: 'the calls whose dependencies to return' },
};

/** Outputs of the given calls. */
export const TASK_OUTPUTS: QuerySpec = {
  name: 'task_outputs',
  description: 'tool_outputs rows produced by the given calls, oldest first.',
  sql: OUTPUTS_OF('{call_ids:Array(UUID)}'),
  params: { db: WINDOW_PARAM_DOCS.db, call_ids: 'the calls whose outputs to return' },
  settings: OUTPUT_SETTINGS,
};

/**
 * Dependencies and outputs of a page of calls in one statement, as JSON rows tagged d/o: the
 * second of the task view's two round trips. (One statement for the whole view, with the page as
 * a subquery, measured slower: the page was computed once per IN.)
 */
export const TASK_DETAILS: QuerySpec = {
  name: 'task_details',
  description: 'Dependencies (kind d) and outputs (kind o) of the given calls of a task, as JSON rows.',
  sql: `SELECT 'd' AS kind, formatRow('JSONEachRow', *) AS row FROM (${DEPENDENCIES_OF('{call_ids:Array(UUID)}')})
UNION ALL
SELECT 'o' AS kind, formatRow('JSONEachRow', *) AS row FROM (${OUTPUTS_OF('{call_ids:Array(UUID)}')})`,
  params: { db: WINDOW_PARAM_DOCS.db, task_id: 'the task', call_ids: 'the calls of the page' },
  // A few granules per branch: one thread avoids the pool's hand-offs.
  settings: { ...OUTPUT_SETTINGS, max_threads: 1 },
};

/** Model turns read with one page of a large task at most (its calls are at most a page's limit). */
const TURNS_PER_PAGE = 10_000;

/** Cursor of the task view: (created_at ms, call_id) of the last call returned. */
export const taskCursor = cursorCodec('task', z.tuple([msKey, uuidKey]));

/** Parameters of {@link byTask}. */
export interface ByTaskParams {
  taskId: string;
  window: TimeWindow;
  limit: number;
  cursor?: string;
}

/**
 * Runs the task view. Fast path: all rows of the task from task_rows in one statement, the page
 * cut in JavaScript ({@link pageFromTaskRows}). A task with more than {@link TASK_ROWS_CAP} rows:
 * the page of calls, then their dependencies and outputs, from the segments. `rowsCap` 0 always
 * takes the segment way (tests compare the two). `orphans`: the process's in-memory orphan list
 * (without one, a snapshot is read for this call).
 */
export async function byTask(
  ch: StatementRunner,
  db: string,
  p: ByTaskParams,
  ctx: QueryContext,
  opts: { rowsCap?: number; orphans?: OrphanCallIds } = {},
): Promise<TaskView> {
  const after = p.cursor === undefined ? undefined : taskCursor.decode(p.cursor);
  const cap = opts.rowsCap ?? TASK_ROWS_CAP;
  let page: TaskPage | undefined;
  if (cap > 0) {
    const orphans = opts.orphans ?? new OrphanCallIds(orphanLoader(ch, db, ctx));
    const since = await orphans.tailStart();
    const rows = await runQuery<TaskRow>(ch, TASK_ROWS, { db, task_id: p.taskId, cap: cap + 1, since }, ctx);
    const tail = new Set(rows.filter((r) => r.kind === 'orphan').map((r) => r.row));
    if (rows.reduce((n, r) => n + (r.kind === 'orphan' ? 0 : 1), 0) <= cap) {
      page = pageFromTaskRows(rows, { fromMs: p.window.fromMs, toMs: p.window.toMs, limit: p.limit, after });
      // Outputs stored without their task (rare): read by call_id, as the segment way does.
      const lost = page.calls.map((c) => c.call_id).filter((id) => tail.has(id) || orphans.has(id));
      if (lost.length > 0) page.outputs = mergeOutputs(page.outputs, await runQuery<OutputReadRow>(ch, TASK_OUTPUTS, { db, call_ids: lost }, ctx));
    }
  }
  page ??= await segmentPage(ch, db, p, after, ctx);
  const invocations = page.calls.map((r) => toInvocation(r, ctx.expensiveThresholdUsd));
  const dependencies = page.dependencies.map(toDependency);
  const last = page.calls[page.calls.length - 1];
  // The turns of the page's span: from the cursor (or the window's start) to its last call (or,
  // on the last page, the window's end), so that each turn shows on one page beside its calls.
  const span = { fromMs: after ? after[0] : p.window.fromMs, toMs: page.more && last ? Number(last.created_ms) : p.window.toMs - 1 };
  const [turns, runRows] = await Promise.all([
    page.turns
      ? page.turns.filter((t) => Number(t.created_ms) >= span.fromMs && Number(t.created_ms) <= span.toMs)
      : runQuery<TurnReadRow>(ch, TASK_TURNS, { db, task_id: p.taskId, from: chTime(span.fromMs), to: chTime(span.toMs), limit: TURNS_PER_PAGE }, ctx),
    page.runs ?? runQuery<RunReadRow>(ch, TASK_RUNS, { db, task_id: p.taskId, limit: RUNS_PER_TASK }, ctx),
  ]);
  const runs = runViews(runRows);
  return {
    task_id: p.taskId,
    name: runs.name,
    agent_id: runs.agent_id,
    invocations,
    dependencies,
    outputs: page.outputs.map(toOutput),
    workflow_dag: workflowDag(invocations, dependencies),
    model_turns: linkTurns(turns, invocations.map((c) => ({ call_id: c.call_id, tool_id: c.tool_id, created_at: c.created_at, tool_call_id: toolCallIdOf(c.result_summary) }))),
    agent_runs: runs.runs,
    next_cursor: page.more && last ? taskCursor.encode([Number(last.created_ms), last.call_id]) : null,
  };
}

/** result_summary.tool_call_id of a call (its stored text is served unparsed; read here for the id alone). */
function toolCallIdOf(summary: unknown): string | undefined {
  const value = summary instanceof RawJson ? (summary.text.includes('"tool_call_id"') ? (JSON.parse(summary.text) as unknown) : undefined) : summary;
  const id = (value as { tool_call_id?: unknown } | undefined)?.tool_call_id;
  return typeof id === 'string' ? id : undefined;
}

/** Outputs of both lists, one per output_id, in output order. */
function mergeOutputs(a: OutputReadRow[], b: OutputReadRow[]): OutputReadRow[] {
  const byId = new Map([...a, ...b].map((o) => [o.output_id, o]));
  return [...byId.values()].sort(outputOrder);
}

/** One page from the segments: the calls, then their dependencies and outputs (two statements). */
async function segmentPage(ch: StatementRunner, db: string, p: ByTaskParams, after: TaskCursor | undefined, ctx: QueryContext): Promise<TaskPage> {
  const calls = await runQuery<InvocationReadRow>(
    ch,
    TASK_INVOCATIONS,
    {
      db,
      task_id: p.taskId,
      from: chTime(p.window.fromMs),
      to: chTime(p.window.toMs),
      has_cursor: after !== undefined,
      c_at: chTime(after?.[0] ?? 0),
      c_id: after?.[1] ?? '00000000-0000-0000-0000-000000000000',
      limit: p.limit + 1,
    },
    ctx,
  );
  const page = pageOf(calls, p.limit);
  const ids = new Set(page.rows.map((c) => c.call_id));
  const dependencies: Dependency[] = [];
  const outputs: OutputReadRow[] = [];
  if (ids.size > 0) {
    for (const r of await runQuery<{ kind: 'd' | 'o'; row: string }>(ch, TASK_DETAILS, { db, task_id: p.taskId, call_ids: [...ids] }, ctx)) {
      const v: unknown = JSON.parse(r.row);
      if (r.kind === 'd') dependencies.push(v as Dependency);
      else outputs.push(v as OutputReadRow);
    }
  }
  // UNION ALL branches arrive in any order: sort outputs as their statement does.
  return { calls: page.rows, more: page.more, dependencies, outputs: outputs.sort(outputOrder) };
}

/** The DAG of a set of calls: one node per call, one edge per dependency between two of them. */
export function workflowDag(invocations: TaskView['invocations'], dependencies: Dependency[]): TaskView['workflow_dag'] {
  const present = new Set(invocations.map((i) => i.call_id));
  return {
    nodes: invocations.map((i) => ({
      id: i.call_id,
      tool_id: i.tool_id,
      status: i.status,
      created_at: i.created_at,
      duration_ms: i.duration_ms,
      cost_usd: i.cost_usd,
    })),
    edges: dependencies
      .filter((d) => present.has(d.preceding_call_id) && present.has(d.succeeding_call_id))
      .map((d) => ({ from: d.preceding_call_id, to: d.succeeding_call_id, time_delta_ms: d.time_delta_ms, data_flow: d.data_flow })),
  };
}
