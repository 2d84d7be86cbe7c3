/**
 * /search?q=: calls and outputs whose args, result summary, error, output sample or content hold
 * every term and "quoted phrase" of q (GET /v1/search), newest first, each hit with the field it
 * was found in, an excerpt, and a link to the call in its task's page; filters for tool, agent,
 * status, task and field, and the window. The box that searches is in the header of every page.
 */
import type { SearchAnswer } from '../../../schemas/answers.ts';
import { getJson } from '../api.ts';
import { callHref, el, filterForm, link, olderLink, table, taskHref, toolHref, windowPicker } from '../dom.ts';
import { searchHref, type SearchFilters } from '../finding-model.ts';
import { formatTime } from '../format.ts';
import { lastHours } from '../window.ts';

type Hit = SearchAnswer['hits'][number];

const FIELD_NAMES: Record<Hit['field'], string> = { args: 'args', result_summary: 'result summary', error: 'error', sample: 'output sample', content: 'output content' };

const callCode = (h: Hit) => el('code', { title: h.call_id }, h.call_id.slice(0, 8));

/** The header's search box: every page can search. */
export function siteSearchForm(go: (href: string) => void, q = ''): HTMLElement {
  const input = el('input', { type: 'search', id: 'site-search', name: 'q', placeholder: 'search args, outputs, errors', value: q, required: true, autocomplete: 'off' });
  const form = el('form', { role: 'search', class: 'search', 'aria-label': 'Search calls and outputs' }, el('label', { for: 'site-search', class: 'sr-only' }, 'Search'), input, el('button', { type: 'submit' }, 'Search'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const v = input.value.trim();
    if (v) go(searchHref({ q: v }));
  });
  return form;
}

/** The excerpt with every occurrence of the query's words marked. */
function marked(excerpt: string, q: string): HTMLElement {
  const words = (q.toLowerCase().match(/[a-z0-9\u0080-\uffff]+/g) ?? []).filter((w) => w.length > 0);
  const out = el('span', { class: 'excerpt' });
  if (words.length === 0) return (out.append(excerpt), out);
  const re = new RegExp(`(${words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'gi');
  for (const [i, part] of excerpt.split(re).entries()) out.append(i % 2 === 1 ? el('mark', {}, part) : part);
  return out;
}

/** Renders the search page. */
export async function searchPage(root: HTMLElement, f: SearchFilters, go: (href: string) => void): Promise<void> {
  const form = filtersForm(f, go);
  if (!f.q) {
    root.replaceChildren(el('h1', {}, 'Search'), form, el('p', { class: 'hint' }, 'Terms and "quoted phrases", all in one field: args, result summaries, errors, output samples and contents.'));
    return;
  }
  const answer = await getJson<SearchAnswer>('/v1/search', {
    ...lastHours(f.hours),
    q: f.q,
    limit: 50,
    tool_id: f.tool || undefined,
    status: f.status || undefined,
    task_id: f.task || undefined,
    field: f.field || undefined,
    cursor: f.cursor || undefined,
  });
  root.replaceChildren(
    el('h1', {}, 'Search'),
    form,
    windowPicker(f.hours, (h) => go(searchHref({ ...f, hours: h, cursor: '' }))),
    answer.hits.length
      ? table<Hit>(
          `${answer.hits.length}${answer.next_cursor ? '+' : ''} calls and outputs holding ${f.q}, newest first`,
          [
            { title: 'created (UTC)', cell: (h) => formatTime(h.created_at) },
            { title: 'found in', cell: (h) => FIELD_NAMES[h.field] },
            { title: 'tool', cell: (h) => link(toolHref(h.tool_id), h.tool_id) },
            { title: 'task', cell: (h) => (h.task_id ? link(taskHref(h.task_id), h.task_id) : '–') },
            { title: 'call', cell: (h) => (h.task_id ? link(callHref(h.task_id, h.call_id), callCode(h)) : callCode(h)) },
            { title: 'excerpt', cell: (h) => marked(h.excerpt, f.q) },
          ],
          answer.hits,
          { testId: 'search-table' },
        )
      : el('p', { role: 'status' }, 'Nothing found in this window.'),
    olderLink(answer.next_cursor && searchHref({ ...f, cursor: answer.next_cursor }), 'Older hits →'),
  );
}

function filtersForm(f: SearchFilters, go: (href: string) => void): HTMLElement {
  const q = el('input', { type: 'search', id: 'q', name: 'q', value: f.q, required: true, autocomplete: 'off' });
  const tool = el('input', { type: 'text', id: 'tool', value: f.tool, placeholder: 'any tool', autocomplete: 'off' });
  const task = el('input', { type: 'text', id: 'task', value: f.task, placeholder: 'any task', autocomplete: 'off' });
  const status = el('select', { id: 'status' }, ...['', 'success', 'error', 'timeout', 'rate_limited', 'invalid_input'].map((s) => el('option', { value: s, selected: s === f.status }, s || 'any status')));
  const field = el('select', { id: 'field' }, ...['', 'args', 'result_summary', 'error', 'sample', 'content'].map((s) => el('option', { value: s, selected: s === f.field }, s ? FIELD_NAMES[s as Hit['field']] : 'every field')));
  const onsubmit = (e: Event) => {
    e.preventDefault();
    go(searchHref({ q: q.value.trim(), hours: f.hours, tool: tool.value.trim(), status: status.value, task: task.value.trim(), field: field.value }));
  };
  return filterForm(
    'Search with filters',
    [
      ['q', 'Find', q],
      ['tool', 'Tool', tool],
      ['task', 'Task', task],
      ['status', 'Status', status],
      ['field', 'In', field],
    ],
    'Search',
    onsubmit,
  );
}
