/**
 * ByTask (SPEC §5, GET /v1/tasks/{task_id}): a task's calls in call order, the dependencies and
 * outputs of those calls, and the workflow DAG they form. One task's calls are one primary-key
 * range of tool_invocations (ORDER BY task_id, created_at, call_id), its dependencies one range
 * of tool_workflows (ORDER BY task_id, …).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { z } from 'zod';
import { cursorCodec, msKey, uuidKey } from './cursor.ts';
import { DEPENDENCY_COLUMNS, INVOCATION_COLUMNS, OUTPUT_COLUMNS, toDependency, toInvocation, toOutput, type InvocationRow, type OutputRow } from './rows.ts';
import type { Dependency, TaskView } from './schemas.ts';
import { chTime, pageOf, PAGE_PARAM_DOCS, runQuery, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow } from './sql.ts';

/** The task's calls in call order, one page. */
export const TASK_INVOCATIONS: QuerySpec = {
  name: 'task_invocations',
  description: "One task's invocations in call order (created_at, then call_id).",
  sql: `SELECT ${INVOCATION_COLUMNS}
FROM {db:Identifier}.tool_invocations
WHERE task_id = {task_id:String}
  AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND (NOT {has_cursor:Bool} OR (created_at, call_id) > ({c_at:DateTime64(3, 'UTC')}, {c_id:UUID}))
ORDER BY created_at, call_id
LIMIT {limit:UInt32}`,
  params: {
    ...WINDOW_PARAM_DOCS,
    ...PAGE_PARAM_DOCS,
    task_id: 'the task',
    c_at: 'created_at of the last call of the previous page',
    c_id: 'call_id of the last call of the previous page',
  },
};

/** Dependencies of a task that touch the given calls. */
export const TASK_DEPENDENCIES: QuerySpec = {
  name: 'task_dependencies',
  description: 'tool_workflows rows of a task whose preceding or succeeding call is among call_ids (one row per pair).',
  sql: `SELECT ${DEPENDENCY_COLUMNS}
FROM {db:Identifier}.tool_workflows
WHERE task_id = {task_id:String}
  AND (preceding_call_id IN {call_ids:Array(UUID)} OR succeeding_call_id IN {call_ids:Array(UUID)})
ORDER BY preceding_call_id, succeeding_call_id, origin
LIMIT 1 BY preceding_call_id, succeeding_call_id`,
  params: { db: WINDOW_PARAM_DOCS.db, task_id: 'the task', call_ids: 'the calls whose dependencies to return' },
};

/** Outputs of the given calls. */
export const TASK_OUTPUTS: QuerySpec = {
  name: 'task_outputs',
  description: 'tool_outputs rows produced by the given calls, oldest first.',
  sql: `SELECT ${OUTPUT_COLUMNS}
FROM {db:Identifier}.tool_outputs
WHERE call_id IN {call_ids:Array(UUID)}
ORDER BY created_at, output_id`,
  params: { db: WINDOW_PARAM_DOCS.db, call_ids: 'the calls whose outputs to return' },
  // Served by the by_call projection (migration 002: sorted by call_id, 64-row granules). The
  // planner compares marks, and one bloom-filtered 8192-row mark of the table looks as cheap as
  // one 64-row mark of the projection, which reads 100× less: skip indexes off for this query.
  settings: { use_skip_indexes: 0 },
};

/** Cursor of the task view: (created_at ms, call_id) of the last call returned. */
export const taskCursor = cursorCodec('task', z.tuple([msKey, uuidKey]));

/** Parameters of {@link byTask}. */
export interface ByTaskParams {
  taskId: string;
  window: TimeWindow;
  limit: number;
  cursor?: string;
}

/** Runs the task view. */
export async function byTask(ch: ClickHouseClient, db: string, p: ByTaskParams, ctx: QueryContext): Promise<TaskView> {
  const after = p.cursor === undefined ? undefined : taskCursor.decode(p.cursor);
  const rows = await runQuery<InvocationRow>(
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
  const page = pageOf(rows, p.limit);
  const invocations = page.rows.map((r) => toInvocation(r, ctx.expensiveThresholdUsd));
  const callIds = invocations.map((i) => i.call_id);
  let dependencies: Dependency[] = [];
  let outputs: TaskView['outputs'] = [];
  if (callIds.length > 0) {
    // Sequential on purpose: the embedded engine runs parameterised queries one at a time anyway.
    dependencies = (await runQuery<Dependency>(ch, TASK_DEPENDENCIES, { db, task_id: p.taskId, call_ids: callIds }, ctx)).map(toDependency);
    outputs = (await runQuery<OutputRow>(ch, TASK_OUTPUTS, { db, call_ids: callIds }, ctx)).map(toOutput);
  }
  const last = page.rows[page.rows.length - 1];
  return {
    task_id: p.taskId,
    invocations,
    dependencies,
    outputs,
    workflow_dag: workflowDag(invocations, dependencies),
    next_cursor: page.more && last ? taskCursor.encode([Number(last.created_ms), last.call_id]) : null,
  };
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
