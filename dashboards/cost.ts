/**
 * Cost: where does the money go? Totals, cost over time by agent, the most expensive tools and
 * agents, the cost of each task, and the calls above the expensive threshold.
 */
import { COST_BY_AGENT, COST_BY_AGENT_OVER_TIME, COST_BY_TOOL, COST_PER_TASK, COST_TOTALS, MODEL_COST_BY_MODEL } from '../queries/dashboard-cost.ts';
import { EXPENSIVE_CALLS } from '../queries/expensive.ts';
import { HINTS_TABLE } from '../queries/dashboard-hints.ts';
import { BUDGET_DECISIONS_OVER_TIME, BUDGET_RECENT_DENIALS, BUDGET_SPEND_VS_LIMIT } from '../queries/dashboard-budgets.ts';
import { baseDashboard, finish, type BuiltDashboard, type DashboardOptions } from './base.ts';
import { INVOCATION_HIDDEN, INVOCATION_UNITS, seriesPanel, statPanel, tablePanel } from './panels.ts';
import { agentVariable, numberVariable, toolVariable } from './variables.ts';

export const COST_UID = 'tool-audit-cost';

/** Builds the Cost dashboard. */
export function buildCost(opts: DashboardOptions): BuiltDashboard {
  const { builder, layout } = baseDashboard(opts, COST_UID, 'tool-audit · Cost', 'Top tools and agents by cost, expensive calls and cost per task.');
  builder
    .withVariable(agentVariable(opts))
    .withVariable(toolVariable(opts))
    .withVariable(numberVariable('threshold_usd', 'Expensive above (USD)', [0.1, 0.5, 1, 2, 5, 10], 1, 'A call is expensive when its cost_usd is strictly more than this (SPEC: 1.0).'));
  builder.withPanel(
    statPanel(layout, {
      title: 'Cost totals',
      description: 'Over the time range (and the selected agent and tool): total cost, expensive calls and their cost, tasks and the average cost of a task.',
      targets: [{ spec: COST_TOTALS }],
      w: 24,
      h: 4,
      fields: [
        { field: 'total_cost_usd', name: 'Total cost', unit: 'currencyUSD' },
        { field: 'expensive_calls', name: 'Expensive calls', unit: 'short' },
        { field: 'expensive_cost_usd', name: 'Spent on expensive calls', unit: 'currencyUSD' },
        { field: 'tasks', name: 'Tasks', unit: 'short' },
        { field: 'avg_cost_per_task_usd', name: 'Average task cost', unit: 'currencyUSD' },
      ],
    }),
  );
  builder.withPanel(
    seriesPanel(layout, { title: 'Cost over time by agent', description: 'Sum of cost_usd in each interval, stacked by agent.', targets: [{ spec: COST_BY_AGENT_OVER_TIME }], w: 24, h: 8, unit: 'currencyUSD', label: 'agent_id', stacked: true, bars: true }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Top tools by cost',
      description: 'Per tool: total, average and maximum cost and calls, most expensive first.',
      targets: [{ spec: COST_BY_TOOL, limit: 20 }],
      w: 12,
      h: 9,
      units: { total_cost_usd: 'currencyUSD', avg_cost_usd: 'currencyUSD', max_cost_usd: 'currencyUSD' },
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Top agents by cost',
      description: 'Per agent: total and average cost, calls, distinct tools and the tool it spent most on, most expensive first.',
      targets: [{ spec: COST_BY_AGENT, limit: 20 }],
      w: 12,
      h: 9,
      units: { total_cost_usd: 'currencyUSD', avg_cost_usd: 'currencyUSD' },
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Model cost by model',
      description: 'The model turns around the calls (the selected agent\'s): turns, tokens in / out / read from cache, cost (reported, else from the price table) and turns without a known cost, most costly first — beside the tool cost above.',
      targets: [{ spec: MODEL_COST_BY_MODEL, limit: 20 }],
      w: 24,
      h: 7,
      units: { model_cost_usd: 'currencyUSD' },
    }),
  );
  addCallPanels(builder, layout);
  addBudgetPanels(builder, layout);
  builder.withPanel(
    tablePanel(layout, {
      title: 'Optimization hints',
      description: 'What the hints job (and external producers) suggest: tools to cache, data-flow sequences to bundle into one call, retry storms; newest first with the estimated savings (docs/manifests-budgets-hints.md: Optimization hints).',
      targets: [{ spec: HINTS_TABLE }],
      w: 24,
      h: 9,
      units: { savings_s: 's', savings_usd: 'currencyUSD' },
    }),
  );
  return finish(builder, layout);
}

/** The calls behind the cost: per task, and the expensive ones, each linking to its task. */
function addCallPanels(builder: ReturnType<typeof baseDashboard>['builder'], layout: ReturnType<typeof baseDashboard>['layout']): void {
  builder.withPanel(
    tablePanel(layout, {
      title: 'Cost per task',
      description: 'Per task: total cost, calls, failures, tools used, first and last call, most expensive first. Click a task to open it in the Task explorer.',
      targets: [{ spec: COST_PER_TASK, limit: 100 }],
      w: 24,
      h: 9,
      units: { total_cost_usd: 'currencyUSD', first_call: 'dateTimeAsIso', last_call: 'dateTimeAsIso' },
      links: ['task_id'],
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Expensive calls',
      description: 'Calls costing more than the threshold, most expensive first — the API\'s GET /v1/calls/expensive (all agents and tools).',
      targets: [{ spec: EXPENSIVE_CALLS, limit: 100 }],
      w: 24,
      h: 10,
      units: INVOCATION_UNITS,
      hide: INVOCATION_HIDDEN,
      rename: { created_ms: 'created_at' },
      links: ['task_id'],
    }),
  );
}

/** Budgets: spend vs limit in the current period beside the warn and deny decisions. */
function addBudgetPanels(builder: ReturnType<typeof baseDashboard>['builder'], layout: ReturnType<typeof baseDashboard>['layout']): void {
  builder.withPanel(
    tablePanel(layout, {
      title: 'Budgets: spend vs limit (current UTC period)',
      description:
        'Each budget in force with SUM(cost_usd) of the stored calls in its scope this UTC day or month, its limit and the share used (GET /v1/budgets also shows what allowed checks reserve). Not filtered by the time range or the variables.',
      targets: [{ spec: BUDGET_SPEND_VS_LIMIT }],
      w: 12,
      h: 9,
      units: { limit_usd: 'currencyUSD', spent_usd: 'currencyUSD', used: 'percentunit' },
    }),
  );
  builder.withPanel(
    seriesPanel(layout, {
      title: 'Budget warnings and denials',
      description: 'Budget checks answered warn or deny, per interval (POST /v1/budget/check; every decision is in budget_decisions).',
      targets: [{ spec: BUDGET_DECISIONS_OVER_TIME }],
      w: 12,
      h: 9,
      unit: 'short',
      label: 'decision',
      stacked: true,
      bars: true,
    }),
  );
  builder.withPanel(
    tablePanel(layout, {
      title: 'Latest budget warnings and denials',
      description: 'The newest warn and deny decisions: who asked for which tool, the projected cost and the budgets it would have taken over (GET /v1/budget/decisions).',
      targets: [{ spec: BUDGET_RECENT_DENIALS, limit: 100 }],
      w: 24,
      h: 8,
      units: { decided_ms: 'dateTimeAsIso', projected_cost_usd: 'currencyUSD' },
      rename: { decided_ms: 'decided_at' },
      links: ['task_id'],
    }),
  );
}
