/**
 * /waste: what repeated work cost — dedup candidates (identical tool + args, GET
 * /v1/dedup/candidates) and identical outputs (GET /v1/outputs/identical), with their savings
 * and example tasks; and, where the server offers them, the cache simulation and budgets
 * (see optional-sections.ts).
 */
import type { Dedup, IdenticalOutputs, InvocationList } from '../../../schemas/answers.ts';
import { getJson, publishedPaths } from '../api.ts';
import { el, facts, link, table, taskHref, toolHref, windowPicker } from '../dom.ts';
import { formatCount, formatMs, formatTime, formatUsd, short } from '../format.ts';
import { curveOf, offeredSections, rowsOf, type OptionalSection } from '../optional-sections.ts';
import { lineChart } from '../charts.ts';
import { lastHours } from '../window.ts';

type Group = Dedup['groups'][number];
type Identical = IdenticalOutputs['groups'][number];

/** Renders the waste page for the last `hours`. */
export async function wastePage(root: HTMLElement, hours: number, go: (href: string) => void): Promise<void> {
  const window = lastHours(hours);
  const [dedup, identical, paths] = await Promise.all([
    getJson<Dedup>('/v1/dedup/candidates', { ...window, limit: 100 }),
    getJson<IdenticalOutputs>('/v1/outputs/identical', { ...window, limit: 100 }),
    publishedPaths(),
  ]);
  const examples = exampleTasks(window, [...new Set([...dedup.groups, ...identical.groups].map((g) => g.tool_id))]);
  const tasksCell = (tool: string, match: (c: InvocationList['invocations'][number]) => boolean) => {
    const cell = el('span', { class: 'examples' }, '…');
    void examples(tool).then((calls) => {
      const ids = [...new Set(calls.filter(match).flatMap((c) => (c.task_id ? [c.task_id] : [])))].slice(0, 3);
      cell.replaceChildren(...(ids.length ? ids.flatMap((id, i) => [i ? ', ' : '', link(taskHref(id), id)]) : ['(no task)']));
    });
    return cell;
  };
  const t = dedup.totals;
  root.replaceChildren(
    el('h1', {}, 'Waste'),
    windowPicker(hours, (h) => go(`/waste?hours=${h}`)),
    el('h2', {}, 'Repeated calls (identical tool and args)'),
    facts('Dedup totals', [
      ['groups', formatCount(t.groups)],
      ['repeated calls', formatCount(t.duplicate_calls)],
      ['time the repeats took', formatMs(t.potential_savings_ms)],
      ['cost of the repeats', formatUsd(t.potential_savings_usd)],
    ]),
    dedup.groups.length
      ? table<Group>(
          'Dedup candidates: what the calls beyond the first of each group cost',
          [
            { title: 'tool', cell: (g) => link(toolHref(g.tool_id), g.tool_id), sort: (g) => g.tool_id },
            { title: 'args_hash', cell: (g) => el('code', { title: g.args_hash }, short(g.args_hash, 12)) },
            { title: 'calls', cell: (g) => formatCount(g.count), sort: (g) => g.count, numeric: true },
            { title: 'time saved', cell: (g) => formatMs(g.potential_savings_ms), sort: (g) => g.potential_savings_ms, numeric: true },
            { title: 'cost saved', cell: (g) => formatUsd(g.potential_savings_usd), sort: (g) => g.potential_savings_usd, numeric: true },
            { title: 'last seen (UTC)', cell: (g) => formatTime(g.last_seen), sort: (g) => g.last_seen },
            { title: 'example tasks', cell: (g) => tasksCell(g.tool_id, (c) => c.args_hash === g.args_hash) },
          ],
          dedup.groups,
          { testId: 'dedup-table' },
        )
      : el('p', { class: 'hint' }, 'No repeated calls in the window.'),
    el('h2', {}, 'Identical outputs'),
    identical.groups.length
      ? table<Identical>(
          'Outputs of one tool with the same content: the repeats could have been served from a cache',
          [
            { title: 'tool', cell: (g) => link(toolHref(g.tool_id), g.tool_id), sort: (g) => g.tool_id },
            { title: 'content_hash', cell: (g) => el('code', { title: g.content_hash }, short(g.content_hash, 12)) },
            { title: 'outputs', cell: (g) => formatCount(g.count), sort: (g) => g.count, numeric: true },
            { title: 'example tasks', cell: (g) => tasksCell(g.tool_id, (c) => g.call_ids.includes(c.call_id)) },
          ],
          identical.groups,
          { testId: 'identical-table' },
        )
      : el('p', { class: 'hint' }, 'No identical outputs in the window.'),
    ...offeredSections(paths).map((s) => optionalSection(s, window)),
  );
}

/** Example tasks come from each tool's latest calls (one request per tool, shared by its rows). */
function exampleTasks(window: { from: string; to: string }, tools: string[]) {
  const cache = new Map<string, Promise<InvocationList['invocations']>>();
  return (tool: string) => {
    if (!tools.includes(tool)) return Promise.resolve([]);
    let p = cache.get(tool);
    if (!p) cache.set(tool, (p = getJson<InvocationList>(`/v1/tools/${encodeURIComponent(tool)}/invocations`, { ...window, limit: 1000 }).then((l) => l.invocations, () => [])));
    return p;
  };
}

function optionalSection(s: OptionalSection, window: { from: string; to: string }): HTMLElement {
  const section = el('section', { 'data-optional-section': s.id, 'aria-label': s.title }, el('h2', {}, s.title), el('p', { class: 'hint' }, 'Loading…'));
  void getJson<unknown>(s.path, window).then(
    (answer) => {
      const rows = rowsOf(answer);
      const curve = s.curve ? curveOf(rows) : null;
      const canvas = curve ? el('canvas', { 'aria-hidden': 'true' }) : null;
      const cols = Object.keys(rows[0] ?? {});
      section.replaceChildren(
        el('h2', {}, s.title),
        canvas ? el('div', { class: 'chart-box', style: 'height:220px' }, canvas) : '',
        rows.length ? table(s.title, cols.map((k) => ({ title: k, cell: (r: (typeof rows)[number]) => String(r[k] ?? '–') })), rows) : el('p', { class: 'hint' }, 'Nothing yet.'),
      );
      if (canvas && curve) lineChart(canvas, curve);
    },
    (err: Error) => section.replaceChildren(el('h2', {}, s.title), el('p', { role: 'alert' }, err.message)),
  );
  return section;
}
