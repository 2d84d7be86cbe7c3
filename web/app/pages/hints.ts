/**
 * /hints: the optimization hints (GET /v1/hints) of the window, newest first, by kind — what each
 * would save, the tools and example tasks it concerns, and the evidence it rests on: its figures
 * as text, and the whole evidence as the analyzer (or a producer) recorded it.
 */
import type { HintsList } from '../../../schemas/answers.ts';
import { getJson } from '../api.ts';
import { el, json, link, olderLink, table, taskHref, toolHref, windowPicker } from '../dom.ts';
import { formatMs, formatTime, formatUsd } from '../format.ts';
import { lastHours } from '../window.ts';
import { evidenceFigures, hintsHref } from '../finding-model.ts';

type Hint = HintsList['hints'][number];

/** The kinds of hints, as GET /v1/hints takes them. */
const KINDS = ['cache_candidate', 'bundle_candidate', 'retry_storm'] as const;



function evidenceCell(h: Hint): HTMLElement {
  const e = h.evidence as Record<string, unknown>;
  return el(
    'div',
    { class: 'evidence' },
    el('ul', {}, ...evidenceFigures(e).map((line) => el('li', {}, line))),
    el('details', {}, el('summary', {}, 'as recorded'), json(e)),
  );
}

/** Renders the hints page. */
export async function hintsPage(root: HTMLElement, f: { hours: number; kind: string; cursor: string }, go: (href: string) => void): Promise<void> {
  const window = lastHours(f.hours);
  const answer = await getJson<HintsList>('/v1/hints', { ...window, limit: 100, kind: f.kind || undefined, cursor: f.cursor || undefined });
  const kind = el(
    'select',
    { id: 'kind', onchange: (e: Event) => go(hintsHref({ hours: f.hours, kind: (e.target as HTMLSelectElement).value })) },
    el('option', { value: '' }, 'every kind'),
    ...KINDS.map((k) => el('option', { value: k, selected: k === f.kind }, k.replace('_', ' '))),
  );
  root.replaceChildren(
    el('h1', {}, 'Optimization hints'),
    windowPicker(f.hours, (h) => go(hintsHref({ hours: h, kind: f.kind }))),
    el('div', { class: 'filters' }, el('label', { for: 'kind' }, 'Kind '), kind),
    answer.hints.length
      ? table<Hint>(
          `${answer.hints.length}${answer.next_cursor ? '+' : ''} hints created in the window, newest first`,
          [
            { title: 'created (UTC)', cell: (h) => formatTime(h.created_at), sort: (h) => h.created_at },
            { title: 'kind', cell: (h) => h.kind.replace('_', ' '), sort: (h) => h.kind },
            { title: 'tools', cell: (h) => el('span', {}, ...h.tool_ids.flatMap((t, i) => [i ? ' → ' : '', link(toolHref(t), t)])) },
            { title: 'would save', cell: (h) => `${formatMs(h.estimated_savings_ms)}, ${formatUsd(h.estimated_savings_usd)}`, sort: (h) => h.estimated_savings_ms, numeric: true },
            { title: 'example tasks', cell: (h) => el('span', {}, ...(h.task_ids_sample.length ? h.task_ids_sample.slice(0, 3).flatMap((t, i) => [i ? ', ' : '', link(taskHref(t), t)]) : ['–'])) },
            { title: 'evidence', cell: evidenceCell },
          ],
          answer.hints,
          { testId: 'hint-table' },
        )
      : el('p', { role: 'status' }, 'No hints in this window.'),
    olderLink(answer.next_cursor && hintsHref({ ...f, cursor: answer.next_cursor }), 'Older hints →'),
  );
}
