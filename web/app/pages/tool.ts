/**
 * /tools/{tool_id}: a tool's stats and error distribution (GET /v1/tools/{id}/stats), and its
 * slowest and most expensive calls, each linking to its task. Those come from the tool's latest
 * 1000 calls in the window (GET /v1/tools/{id}/invocations; the API's slow/expensive lists
 * have no tool filter), which the page says.
 */
import type { Invocation, InvocationList, ToolStats } from '../../../schemas/answers.ts';
import { getJson } from '../api.ts';
import { barChart } from '../charts.ts';
import { callHref, el, facts, link, table, windowPicker } from '../dom.ts';
import { formatCount, formatMs, formatPct, formatTime, formatUsd } from '../format.ts';
import { lastHours } from '../window.ts';

const SAMPLE = 1000;

/** Renders a tool's page for the last `hours`. */
export async function toolPage(root: HTMLElement, toolId: string, hours: number, go: (href: string) => void): Promise<void> {
  const window = lastHours(hours);
  const path = `/v1/tools/${encodeURIComponent(toolId)}`;
  const [stats, list] = await Promise.all([getJson<ToolStats>(`${path}/stats`, { ...window, limit: 20 }), getJson<InvocationList>(`${path}/invocations`, { ...window, limit: SAMPLE })]);
  const calls = list.invocations;
  const errors = Object.entries(stats.error_distribution);
  const statuses = new Map<string, number>();
  for (const c of calls) statuses.set(c.status, (statuses.get(c.status) ?? 0) + 1);
  const canvas = el('canvas', { 'aria-hidden': 'true' });
  const of = calls.length < stats.invocations ? `of its latest ${formatCount(calls.length)} calls` : 'in the window';
  root.replaceChildren(
    el('h1', {}, 'Tool ', el('code', {}, toolId)),
    windowPicker(hours, (h) => go(`/tools/${encodeURIComponent(toolId)}?hours=${h}`)),
    facts('Tool stats', [
      ['calls', formatCount(stats.invocations)],
      ['success rate', formatPct(stats.success_rate)],
      ['avg', formatMs(stats.avg_duration_ms)],
      ['p95', formatMs(stats.p95_duration_ms)],
      ['cost', formatUsd(stats.total_cost_usd)],
    ]),
    el(
      'div',
      { class: 'two-col' },
      el(
        'section',
        {},
        el('h2', {}, 'Errors'),
        errors.length ? el('div', { class: 'chart-box', style: `height:${40 + errors.length * 26}px` }, canvas) : null,
        errors.length
          ? table<[string, number]>('Error messages, most frequent first', [{ title: 'error', cell: ([m]) => m }, { title: 'calls', cell: ([, n]) => formatCount(n), sort: ([, n]) => n, numeric: true }], errors, { testId: 'error-table' })
          : el('p', { class: 'hint' }, 'No failed calls in the window.'),
      ),
      el(
        'section',
        {},
        el('h2', {}, 'Status'),
        table<[string, number]>(`Calls per status ${of}`, [{ title: 'status', cell: ([s]) => el('span', { class: `status s-${s}` }, s) }, { title: 'calls', cell: ([, n]) => formatCount(n), sort: ([, n]) => n, numeric: true }], [...statuses], { initialSort: 1 }),
      ),
    ),
    el('h2', {}, 'Slowest calls'),
    callTable(`The 10 slowest ${of}`, top(calls, (c) => c.duration_ms), 'slow-table'),
    el('h2', {}, 'Most expensive calls'),
    callTable(`The 10 most expensive ${of}`, top(calls.filter((c) => (c.cost_usd ?? 0) > 0), (c) => c.cost_usd ?? 0), 'expensive-table'),
  );
  if (errors.length) barChart(canvas, errors, '#c62828');
}

function top(calls: Invocation[], key: (c: Invocation) => number): Invocation[] {
  return [...calls].sort((a, b) => key(b) - key(a)).slice(0, 10);
}

function callTable(caption: string, calls: Invocation[], testId: string): HTMLElement {
  if (!calls.length) return el('p', { class: 'hint' }, 'None.');
  return table<Invocation>(
    caption,
    [
      { title: 'task', cell: (c) => (c.task_id ? link(callHref(c.task_id, c.call_id), c.task_id) : '(no task)') },
      { title: 'started (UTC)', cell: (c) => formatTime(c.created_at), sort: (c) => c.created_at },
      { title: 'status', cell: (c) => el('span', { class: `status s-${c.status}` }, c.status) },
      { title: 'duration', cell: (c) => formatMs(c.duration_ms), sort: (c) => c.duration_ms, numeric: true },
      { title: 'cost', cell: (c) => formatUsd(c.cost_usd), sort: (c) => c.cost_usd ?? 0, numeric: true },
      { title: 'agent', cell: (c) => c.agent_id },
    ],
    calls,
    { testId },
  );
}
