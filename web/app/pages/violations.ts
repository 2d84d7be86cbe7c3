/**
 * /violations: what the auditor found (GET /v1/violations), newest first, filtered by invariant
 * or rule, task and tool over the window, with the count of each; every call a finding names links
 * to that call in its task's page. Filters and the page position live in the URL
 * (`?hours=&invariant=&task=&tool=&cursor=`), so a filtered list can be shared.
 */
import type { Violations } from '../../../schemas/answers.ts';
import { getJson } from '../api.ts';
import { callHref, el, facts, filterForm, link, olderLink, table, taskHref, windowPicker } from '../dom.ts';
import { formatCount, formatTime, short } from '../format.ts';
import { lastHours } from '../window.ts';
import { violationsHref } from '../finding-model.ts';

type Violation = Violations['violations'][number];

/** Rows a page shows. */
const PAGE = 100;

/** The page's filters, as its URL holds them. */
export interface ViolationFilters {
  hours: number;
  invariant: string;
  task: string;
  tool: string;
  cursor: string;
}


/** A call a finding names: a link to it in its task's page when its task is known. */
function callLink(v: Violation, id: string): Node {
  const text = el('code', { title: id }, short(id, 12));
  return v.task_id ? link(callHref(v.task_id, id), text) : text;
}

/** Renders the violations page. */
export async function violationsPage(root: HTMLElement, f: ViolationFilters, go: (href: string) => void): Promise<void> {
  const window = lastHours(f.hours);
  const answer = await getJson<Violations>('/v1/violations', { ...window, limit: PAGE, invariant: f.invariant || undefined, task_id: f.task || undefined, tool_id: f.tool || undefined, cursor: f.cursor || undefined });
  const counts = Object.entries(answer.counts).sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }));
  const invariant = el('select', { id: 'invariant', name: 'invariant' }, el('option', { value: '' }, 'every invariant and rule'));
  for (const [k] of counts) invariant.append(el('option', { value: k, selected: k === f.invariant }, k));
  if (f.invariant && !answer.counts[f.invariant]) invariant.append(el('option', { value: f.invariant, selected: true }, f.invariant));
  const task = el('input', { id: 'task', name: 'task', type: 'search', value: f.task, placeholder: 'any task', autocomplete: 'off' });
  const tool = el('input', { id: 'tool', name: 'tool', type: 'search', value: f.tool, placeholder: 'any tool', autocomplete: 'off' });
  const onsubmit = (e: Event) => {
    e.preventDefault();
    go(violationsHref({ hours: f.hours, invariant: invariant.value, task: task.value.trim(), tool: tool.value.trim() }));
  };
  const total = counts.reduce((s, [, n]) => s + n, 0);
  root.replaceChildren(
    el('h1', {}, 'Violations'),
    windowPicker(f.hours, (h) => go(violationsHref({ ...f, hours: h, cursor: '' }))),
    filterForm(
      'Filter violations',
      [
        ['invariant', 'Invariant or rule', invariant],
        ['task', 'Task', task],
        ['tool', 'Tool', tool],
      ],
      'Filter',
      onsubmit,
    ),
    facts(
      'Violations per invariant',
      counts.map(([k, n]) => [k, link(violationsHref({ hours: f.hours, invariant: k, task: f.task, tool: f.tool }), formatCount(n))]),
    ),
    answer.violations.length
      ? table<Violation>(
          `${formatCount(total)} violations in the window${f.invariant ? ` of ${f.invariant}` : ''}${f.task ? ` naming calls of task ${f.task}` : ''}${f.tool ? ` naming calls of ${f.tool}` : ''}, newest first`,
          [
            { title: 'found (UTC)', cell: (v) => formatTime(v.detected_at), sort: (v) => v.detected_at },
            { title: 'rule', cell: (v) => link(violationsHref({ hours: f.hours, invariant: v.invariant, task: f.task, tool: f.tool }), v.invariant), sort: (v) => v.invariant },
            { title: 'packet', cell: (v) => v.packet_type, sort: (v) => v.packet_type },
            { title: 'what', cell: (v) => v.detail, sort: (v) => v.detail },
            { title: 'task', cell: (v) => (v.task_id ? link(taskHref(v.task_id), v.task_id) : '–'), sort: (v) => v.task_id ?? '' },
            { title: 'calls and records', cell: (v) => el('span', { class: 'ids' }, ...v.ids.flatMap((id, i) => [i ? ' ' : '', callLink(v, id)])) },
          ],
          answer.violations,
          { testId: 'violation-table' },
        )
      : el('p', { role: 'status' }, 'No violations in this window.'),
    olderLink(answer.next_cursor && violationsHref({ ...f, cursor: answer.next_cursor }), 'Older violations →'),
  );
}
