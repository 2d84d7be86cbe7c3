/**
 * /tools: the per-tool table of GET /v1/tools (MCP server, calls, success rate, p95, cost), sortable, with
 * sparklines of calls and cost over the window from GET /v1/tools/series; below it, the window's
 * model turns per model and per agent beside each agent's tool cost (GET /v1/cost/models).
 */
import type { ModelCost, ToolSeries, ToolsSummary } from '../../../schemas/answers.ts';
import { getJson } from '../api.ts';
import { sparkline } from '../charts.ts';
import { el, link, table, toolHref, windowPicker } from '../dom.ts';
import { formatCount, formatMs, formatPct, formatUsd } from '../format.ts';
import { bucketSeconds, densify } from '../series.ts';
import { lastHours } from '../window.ts';

type Tool = ToolsSummary['tools'][number];
type ModelRow = ModelCost['models'][number];
type AgentRow = ModelCost['agents'][number];

/** Renders the tools table for the last `hours`. */
export async function toolsPage(root: HTMLElement, hours: number, go: (href: string) => void): Promise<void> {
  const window = lastHours(hours);
  const bucketS = bucketSeconds(hours);
  const [summary, series, models] = await Promise.all([
    getJson<ToolsSummary>('/v1/tools', { ...window, limit: 1000 }),
    getJson<ToolSeries>('/v1/tools/series', { ...window, bucket_s: bucketS }),
    getJson<ModelCost>('/v1/cost/models', { ...window, limit: 100 }),
  ]);
  const fromMs = Date.parse(window.from);
  const buckets = Math.ceil((hours * 3600) / bucketS) + 1;
  const spark = new Map<string, { calls: HTMLCanvasElement; cost: HTMLCanvasElement }>();
  const every = `${Math.round(bucketS / 60)} min`;
  for (const s of series.series) {
    const d = densify(s.points, fromMs, bucketS, buckets);
    const canvas = (values: number[], what: string, text: string) => {
      const c = el('canvas', { width: 120, height: 28, role: 'img', 'aria-label': `${what} per ${every}: ${text}` });
      queueMicrotask(() => sparkline(c, values, what === 'calls' ? '#1565c0' : '#2e7d32'));
      return c;
    };
    spark.set(s.tool_id, {
      calls: canvas(d.calls, 'calls', `peak ${Math.max(...d.calls)}, total ${d.calls.reduce((a, b) => a + b, 0)}`),
      cost: canvas(d.cost, 'cost', `peak ${formatUsd(Math.max(...d.cost))}, total ${formatUsd(d.cost.reduce((a, b) => a + b, 0))}`),
    });
  }
  root.replaceChildren(
    el('h1', {}, 'Tools'),
    windowPicker(hours, (h) => go(`/tools?hours=${h}`)),
    summary.tools.length
      ? table<Tool>(
          `${summary.tools.length} tools with calls in the window; click a header to sort`,
          [
            { title: 'tool', cell: (t) => link(toolHref(t.tool_id), t.tool_id), sort: (t) => t.tool_id },
            // The MCP server a tool came from (POST /v1/mcp/tools); empty for tools declared otherwise.
            { title: 'server', cell: (t) => t.server, sort: (t) => t.server },
            { title: 'calls', cell: (t) => formatCount(t.invocations), sort: (t) => t.invocations, numeric: true },
            { title: 'success rate', cell: (t) => formatPct(t.success_rate), sort: (t) => t.success_rate, numeric: true },
            { title: 'avg', cell: (t) => formatMs(t.avg_duration_ms), sort: (t) => t.avg_duration_ms, numeric: true },
            { title: 'p95', cell: (t) => formatMs(t.p95_duration_ms), sort: (t) => t.p95_duration_ms, numeric: true },
            { title: 'cost', cell: (t) => formatUsd(t.total_cost_usd), sort: (t) => t.total_cost_usd, numeric: true },
            { title: 'calls over time', cell: (t) => spark.get(t.tool_id)?.calls ?? '–' },
            { title: 'cost over time', cell: (t) => spark.get(t.tool_id)?.cost ?? '–' },
          ],
          summary.tools,
          { testId: 'tool-table' },
        )
      : el('p', { role: 'status' }, 'No tool calls in this window.'),
    ...modelSection(models),
  );
}

const plural = (n: number, what: string) => `${formatCount(n)} ${what}${n === 1 ? '' : 's'}`;
const tokens = (t: { input_tokens: number; output_tokens: number }) => `${formatCount(t.input_tokens)} / ${formatCount(t.output_tokens)}`;

/** The model turns of the window beside the tool cost: per model, then per agent. */
function modelSection(m: ModelCost): HTMLElement[] {
  const heading = el('h2', {}, 'Model cost beside tool cost');
  if (!m.models.length) return [heading, el('p', { role: 'status' }, 'No model turns in this window.')];
  const t = m.totals;
  return [
    heading,
    el('p', {}, `${formatCount(t.turns)} model turns, ${formatUsd(t.model_cost_usd)} (${formatCount(t.unpriced_turns)} without a known cost); ${formatCount(t.tool_calls)} tool calls, ${formatUsd(t.tool_cost_usd)}.`),
    table<ModelRow>(
      `${plural(m.models.length, 'model')}, most costly first`,
      [
        { title: 'model', cell: (r) => r.model, sort: (r) => r.model },
        { title: 'provider', cell: (r) => r.provider ?? '', sort: (r) => r.provider ?? '' },
        { title: 'turns', cell: (r) => formatCount(r.turns), sort: (r) => r.turns, numeric: true },
        { title: 'tokens in / out', cell: tokens, sort: (r) => r.input_tokens + r.output_tokens, numeric: true },
        { title: 'model cost', cell: (r) => formatUsd(r.cost_usd), sort: (r) => r.cost_usd, numeric: true },
      ],
      m.models,
      { testId: 'model-table' },
    ),
    table<AgentRow>(
      `${plural(m.agents.length, 'agent')}: model cost beside tool cost`,
      [
        { title: 'agent', cell: (r) => r.agent_id, sort: (r) => r.agent_id },
        { title: 'turns', cell: (r) => formatCount(r.turns), sort: (r) => r.turns, numeric: true },
        { title: 'tokens in / out', cell: tokens, sort: (r) => r.input_tokens + r.output_tokens, numeric: true },
        { title: 'model cost', cell: (r) => formatUsd(r.cost_usd), sort: (r) => r.cost_usd, numeric: true },
        { title: 'tool calls', cell: (r) => formatCount(r.tool_calls), sort: (r) => r.tool_calls, numeric: true },
        { title: 'tool cost', cell: (r) => formatUsd(r.tool_cost_usd), sort: (r) => r.tool_cost_usd, numeric: true },
      ],
      m.agents,
      { testId: 'agent-cost-table' },
    ),
  ];
}
