/**
 * Dashboard variables. Pickers are ClickHouse query variables whose first option has the value
 * '' ("All tools", "(latest task)"), which the panel SQL reads as "no filter" — so a dashboard
 * works with its saved defaults without any "All" expansion. Numeric knobs are custom variables.
 */
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { AGENT_CHOICES } from '../queries/dashboard-cost.ts';
import { TOOL_CHOICES } from '../queries/dashboard-overview.ts';
import { TASK_CHOICES } from '../queries/dashboard-task.ts';
import type { QuerySpec } from '../queries/sql.ts';
import { CLICKHOUSE_DATASOURCE, QueryFormat } from './clickhouse-query.ts';
import { panelSql, type SqlContext } from './panel-sql.ts';

/** A picker filled by a (value, text) query, defaulting to the '' option. */
function picker(ctx: SqlContext, name: string, label: string, spec: QuerySpec, allText: string, description: string, limit?: number) {
  const rawSql = panelSql(spec, ctx, { limit });
  return new dashboard.QueryVariableBuilder(name)
    .label(label)
    .description(description)
    .datasource(CLICKHOUSE_DATASOURCE)
    .query({ refId: `${name}-variable`, queryType: 'sql', editorType: 'sql', format: QueryFormat.Table, rawSql })
    .definition(rawSql)
    .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
    .sort(dashboard.VariableSort.Disabled)
    .multi(false)
    .includeAll(false)
    .allowCustomValue(true)
    .current({ text: allText, value: '' })
    .options([{ text: allText, value: '', selected: true }]);
}

/** `tool_id`: a tool, or every tool. */
export const toolVariable = (ctx: SqlContext) => picker(ctx, 'tool_id', 'Tool', TOOL_CHOICES, 'All tools', 'Limit the panels to one tool.');
/** `agent_id`: an agent, or every agent. */
export const agentVariable = (ctx: SqlContext) => picker(ctx, 'agent_id', 'Agent', AGENT_CHOICES, 'All agents', 'Limit the panels to one agent.');
/** `task_id`: a task, or the latest one in the time range. */
export const taskVariable = (ctx: SqlContext) =>
  picker(ctx, 'task_id', 'Task', TASK_CHOICES, '(latest task)', 'The task to show; "(latest task)" picks, among the tasks of the range\'s latest 1,000 calls, the most recent with dependencies (else the most recent). Any task id can be typed in.', 500);

/** A numeric knob with a few choices. */
export function numberVariable(name: string, label: string, values: number[], current: number, description: string) {
  if (!values.includes(current)) throw new Error(`variable ${name}: current ${current} is not among its values`);
  const options = values.map((v) => ({ text: String(v), value: String(v), selected: v === current }));
  return new dashboard.CustomVariableBuilder(name)
    .label(label)
    .description(description)
    .values(values.join(','))
    .current({ text: String(current), value: String(current) })
    .options(options)
    .multi(false)
    .includeAll(false)
    .allowCustomValue(true);
}
