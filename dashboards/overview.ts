/**
 * Overview: is the agent's tool use healthy right now? Calls per second, success rate, p95
 * latency and cost over time, per tool, and a per-tool summary.
 */
import {
  CALLS_PER_SECOND_BY_TOOL,
  COST_BY_TOOL_OVER_TIME,
  OVERVIEW_TOTALS,
  P95_DURATION_BY_TOOL,
  SUCCESS_RATE_BY_TOOL,
  TOOLS_SUMMARY,
} from '../queries/dashboard-overview.ts';
import { baseDashboard, finish, type BuiltDashboard, type DashboardOptions } from './base.ts';
import { seriesPanel, statPanel, tablePanel } from './panels.ts';
import { toolVariable } from './variables.ts';

export const OVERVIEW_UID = 'tool-audit-overview';

/** Builds the Overview dashboard. */
export function buildOverview(opts: DashboardOptions): BuiltDashboard {
  const { builder, layout } = baseDashboard(opts, OVERVIEW_UID, 'tool-audit · Overview', 'Calls per second, success rate, p95 latency and cost over time, by tool.');
  builder.withVariable(toolVariable(opts));
  builder.withPanel(
    statPanel(layout, {
      title: 'Totals',
      description: 'Over the time range (and the selected tool): calls, failed calls, average calls per second, success rate, p95 duration and total cost.',
      targets: [{ spec: OVERVIEW_TOTALS }],
      w: 24,
      h: 4,
      fields: [
        { field: 'calls', name: 'Calls', unit: 'short' },
        { field: 'failures', name: 'Failed', unit: 'short' },
        { field: 'calls_per_s', name: 'Calls/s', unit: 'suffix: /s' },
        { field: 'success_rate', name: 'Success rate', unit: 'percentunit' },
        { field: 'p95_duration_ms', name: 'p95 latency', unit: 'ms' },
        { field: 'total_cost_usd', name: 'Cost', unit: 'currencyUSD' },
      ],
    }),
  );
  builder.withPanel(
    seriesPanel(layout, { title: 'Calls per second by tool', description: 'Calls per second in each interval, one series per tool.', targets: [{ spec: CALLS_PER_SECOND_BY_TOOL }], w: 12, h: 8, unit: 'suffix: calls/s', label: 'tool_id', stacked: true }),
  );
  builder.withPanel(
    seriesPanel(layout, { title: 'Success rate by tool', description: "Share of calls with status 'success' in each interval, one series per tool.", targets: [{ spec: SUCCESS_RATE_BY_TOOL }], w: 12, h: 8, unit: 'percentunit', label: 'tool_id' }),
  );
  builder.withPanel(
    seriesPanel(layout, { title: 'p95 latency by tool', description: 'p95 of duration_ms in each interval, one series per tool.', targets: [{ spec: P95_DURATION_BY_TOOL }], w: 12, h: 8, unit: 'ms', label: 'tool_id' }),
  );
  builder.withPanel(
    seriesPanel(layout, { title: 'Cost over time by tool', description: 'Sum of cost_usd in each interval, stacked by tool.', targets: [{ spec: COST_BY_TOOL_OVER_TIME }], w: 12, h: 8, unit: 'currencyUSD', label: 'tool_id', stacked: true, bars: true }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'By tool',
      description: 'Per tool over the time range: calls, failures, success rate, average and p95 duration, total cost and the last call.',
      targets: [{ spec: TOOLS_SUMMARY, limit: 200 }],
      w: 24,
      h: 9,
      units: { success_rate: 'percentunit', avg_duration_ms: 'ms', p95_duration_ms: 'ms', total_cost_usd: 'currencyUSD', last_call: 'dateTimeAsIso' },
    }),
  );
  return finish(builder, layout);
}
