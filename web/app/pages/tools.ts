/**
 * /tools: the per-tool table of GET /v1/tools (MCP server, calls, success rate, p95, cost), sortable, with
 * sparklines of calls and cost over the window from GET /v1/tools/series.
 */
import type { ToolSeries, ToolsSummary } from '../../../queries/schemas.ts';
import { getJson } from '../api.ts';
import { sparkline } from '../charts.ts';
import { el, link, table, toolHref, windowPicker } from '../dom.ts';
import { formatCount, formatMs, formatPct, formatUsd } from '../format.ts';
import { bucketSeconds, densify } from '../series.ts';
import { lastHours } from '../window.ts';

type Tool = ToolsSummary['tools'][number];

/** Renders the tools table for the last `hours`. */
export async function toolsPage(root: HTMLElement, hours: number, go: (href: string) => void): Promise<void> {
  const window = lastHours(hours);
  const bucketS = bucketSeconds(hours);
  const [summary, series] = await Promise.all([
    getJson<ToolsSummary>('/v1/tools', { ...window, limit: 1000 }),
    getJson<ToolSeries>('/v1/tools/series', { ...window, bucket_s: bucketS }),
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
  );
}
