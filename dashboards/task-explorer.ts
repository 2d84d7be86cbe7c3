/**
 * Task explorer: what exactly did this task do, in what order, and how did its calls depend on
 * each other? A task picker, the task's totals, its workflow DAG (Node Graph), its calls in call
 * order, its dependencies and its outputs — the API's GET /v1/tasks/{task_id}.
 */
import { TASK_DEPENDENCIES, TASK_INVOCATIONS, TASK_OUTPUTS } from '../queries/by-task.ts';
import { TASK_DAG_EDGES, TASK_DAG_NODES, TASK_SUMMARY } from '../queries/dashboard-task.ts';
import { baseDashboard, finish, type BuiltDashboard, type DashboardOptions } from './base.ts';
import { INVOCATION_HIDDEN, INVOCATION_UNITS, nodeGraphPanel, statPanel, tablePanel } from './panels.ts';
import { taskVariable } from './variables.ts';

export const TASK_UID = 'tool-audit-task';

/** Builds the Task explorer dashboard. */
export function buildTaskExplorer(opts: DashboardOptions): BuiltDashboard {
  const { builder, layout } = baseDashboard(opts, TASK_UID, 'tool-audit · Task explorer', "One task's calls in order and its workflow DAG.");
  builder.withVariable(taskVariable(opts));
  builder.withPanel(
    statPanel(layout, {
      title: 'Task',
      description: "The task's calls, failed calls, cost, span from its first call's start to its last call's end, and dependency rows.",
      targets: [{ spec: TASK_SUMMARY }],
      w: 24,
      h: 4,
      fields: [
        { field: 'calls', name: 'Calls', unit: 'short' },
        { field: 'failures', name: 'Failed', unit: 'short' },
        { field: 'total_cost_usd', name: 'Cost', unit: 'currencyUSD' },
        { field: 'span_ms', name: 'Span', unit: 'ms' },
        { field: 'dependencies', name: 'Dependencies', unit: 'short' },
      ],
    }),
  );
  builder.withPanel(
    nodeGraphPanel(layout, {
      title: 'Workflow DAG',
      description: 'One node per call (tool, status · agent, duration, cost; green/red arc = success/failure) and one edge per tool_dependency (time_delta_ms; thick = data flowed).',
      targets: [
        { spec: TASK_DAG_NODES, limit: 1000, refId: 'nodes' },
        { spec: TASK_DAG_EDGES, limit: 5000, refId: 'edges' },
      ],
      w: 24,
      h: 14,
      mainStatUnit: 'ms',
      secondaryStatUnit: 'currencyUSD',
      edgeUnit: 'ms',
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Calls in order',
      description: "The task's calls in call order (created_at, then call_id).",
      targets: [{ spec: TASK_INVOCATIONS, limit: 1000 }],
      w: 24,
      h: 10,
      units: INVOCATION_UNITS,
      hide: INVOCATION_HIDDEN,
      rename: { created_ms: 'created_at' },
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Dependencies',
      description: 'tool_workflows rows between calls of the task: who came before whom, how long after, and the data that flowed.',
      targets: [{ spec: TASK_DEPENDENCIES }],
      w: 12,
      h: 9,
      units: { time_delta_ms: 'ms' },
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Outputs',
      description: "Outputs of the task's calls: content type, hash, size and a sample.",
      targets: [{ spec: TASK_OUTPUTS }],
      w: 12,
      h: 9,
      units: { size_bytes: 'bytes', created_ms: 'dateTimeAsIso' },
      rename: { created_ms: 'created_at' },
    }),
  );
  return finish(builder, layout);
}
