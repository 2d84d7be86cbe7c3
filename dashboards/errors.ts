/**
 * Errors: what fails, how, and how often? Failures over time by status, the distributions by
 * status and by error_category, the most frequent error messages, failure rates per tool and the
 * failed calls.
 */
import { FAILURES_BY_TOOL, FAILURES_OVER_TIME } from '../queries/dashboard-errors.ts';
import { OVERVIEW_TOTALS } from '../queries/dashboard-overview.ts';
import { FAILED_BY_CATEGORY, FAILED_BY_STATUS, FAILED_CALLS, FREQUENT_ERRORS } from '../queries/failed.ts';
import { baseDashboard, finish, type BuiltDashboard, type DashboardOptions } from './base.ts';
import { barPanel, INVOCATION_HIDDEN, INVOCATION_UNITS, seriesPanel, statPanel, tablePanel } from './panels.ts';

export const ERRORS_UID = 'tool-audit-errors';

// The API's Failed view covers every tool; so does this dashboard, so all its panels agree.
const ALL_TOOLS = { tool_id: "''" };
// …and every error_category (the API's filter unset).
const ALL_CATEGORIES = { category: "''" };

/** Builds the Errors dashboard. */
export function buildErrors(opts: DashboardOptions): BuiltDashboard {
  const { builder, layout } = baseDashboard(opts, ERRORS_UID, 'tool-audit · Errors', 'Failures by status and error category, frequent errors and failed calls.');
  builder.withPanel(
    statPanel(layout, {
      title: 'Failures',
      description: "Over the time range: calls, failed calls (status other than 'success') and the success rate.",
      targets: [{ spec: OVERVIEW_TOTALS, overrides: ALL_TOOLS }],
      w: 24,
      h: 4,
      fields: [
        { field: 'calls', name: 'Calls', unit: 'short' },
        { field: 'failures', name: 'Failed calls', unit: 'short' },
        { field: 'success_rate', name: 'Success rate', unit: 'percentunit' },
      ],
    }),
  );
  builder.withPanel(
    seriesPanel(layout, { title: 'Failures over time by status', description: 'Failed calls in each interval, stacked by status.', targets: [{ spec: FAILURES_OVER_TIME, overrides: ALL_TOOLS }], w: 12, h: 8, unit: 'short', stacked: true, bars: true }),
  );
  builder.withPanel(
    barPanel(layout, { title: 'Distribution by status', description: 'Failed calls per status over the time range (the API\'s error_distribution).', targets: [{ spec: FAILED_BY_STATUS, overrides: ALL_CATEGORIES }], w: 6, h: 8, xField: 'k', unit: 'short' }),
  );
  builder.withPanel(
    barPanel(layout, {
      title: 'Distribution by error category',
      description: "Failed calls per error_category of tool-smith's error envelope (validation_error, auth_error, not_found, rate_limit, timeout, server_error…; empty: none reported) over the time range (the API's category_distribution).",
      targets: [{ spec: FAILED_BY_CATEGORY, overrides: ALL_CATEGORIES }],
      w: 6,
      h: 8,
      xField: 'k',
      unit: 'short',
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Frequent errors',
      description: 'Error messages with their counts, most frequent first (the API\'s frequent_errors).',
      targets: [{ spec: FREQUENT_ERRORS, limit: 50, overrides: ALL_CATEGORIES }],
      w: 12,
      h: 9,
      rename: { k: 'error', n: 'calls' },
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Failures by tool',
      description: 'Per tool: calls, failures, failure rate, failures per status and its most frequent error.',
      targets: [{ spec: FAILURES_BY_TOOL, limit: 100, overrides: ALL_TOOLS }],
      w: 12,
      h: 9,
      units: { failure_rate: 'percentunit' },
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Failed calls',
      description: 'Failed calls, newest first (the API\'s GET /v1/calls/failed). Click a task to open it in the Task explorer.',
      targets: [{ spec: FAILED_CALLS, limit: 200, overrides: ALL_CATEGORIES }],
      w: 24,
      h: 10,
      units: INVOCATION_UNITS,
      hide: INVOCATION_HIDDEN,
      rename: { created_ms: 'created_at' },
      links: ['task_id'],
    }),
  );
  return finish(builder, layout);
}
