/**
 * Workflows: how do agents chain tools? The tool-transition graph (which tool directly follows
 * which), the most common tool sequences, and the dependency pairs with their hand-over times.
 */
import { COMMON_SEQUENCES } from '../queries/common-sequences.ts';
import { DEPENDENCY_PAIRS_BY_TOOL, TOOL_GRAPH_EDGES, TOOL_GRAPH_NODES } from '../queries/dashboard-workflows.ts';
import { baseDashboard, finish, type BuiltDashboard, type DashboardOptions } from './base.ts';
import { nodeGraphPanel, tablePanel } from './panels.ts';
import { numberVariable } from './variables.ts';

export const WORKFLOWS_UID = 'tool-audit-workflows';

/** Builds the Workflows dashboard. */
export function buildWorkflows(opts: DashboardOptions): BuiltDashboard {
  const { builder, layout } = baseDashboard(opts, WORKFLOWS_UID, 'tool-audit · Workflows', 'Common tool sequences and how tools hand over to each other.');
  builder
    .withVariable(numberVariable('length', 'Sequence length', [2, 3, 4, 5], 3, 'Tools per sequence.'))
    .withVariable(numberVariable('min_count', 'Min occurrences', [2, 3, 5, 10], 2, 'Show sequences seen at least this often.'));
  builder.withPanel(
    nodeGraphPanel(layout, {
      title: 'Tool transitions',
      description: 'One node per tool (calls, success rate; green/red arc = success/failure share) and one edge per "directly followed by" within a task (transitions, median gap).',
      targets: [
        { spec: TOOL_GRAPH_NODES, limit: 200, refId: 'nodes' },
        { spec: TOOL_GRAPH_EDGES, limit: 1000, refId: 'edges' },
      ],
      w: 24,
      h: 14,
      mainStatUnit: 'short',
      secondaryStatUnit: 'percentunit',
      edgeUnit: 'short',
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Common sequences',
      description: "Runs of consecutive tools within a task (call order), most common first (the API's GET /v1/workflows/sequences).",
      targets: [{ spec: COMMON_SEQUENCES, limit: 50 }],
      rename: { n: 'occurrences' },
      w: 12,
      h: 10,
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Dependency pairs by tool',
      description: 'tool_dependency rows per (preceding tool, succeeding tool): pairs, average and p95 time between them, pairs where data flowed, and pairs linked by the analyzer.',
      targets: [{ spec: DEPENDENCY_PAIRS_BY_TOOL, limit: 100 }],
      w: 12,
      h: 10,
      units: { avg_delta_ms: 'ms', p95_delta_ms: 'ms' },
    }),
  );
  return finish(builder, layout);
}
