/**
 * /tasks (and /): a task id search box and the tasks of the last hours with their calls,
 * failures and cost, and their model turns' tokens and cost beside it (GET /v1/tasks); a task an
 * agent run named shows its name beside its id.
 */
import type { TaskList } from '../../../schemas/answers.ts';
import { getJson } from '../api.ts';
import { el, link, table, taskHref, windowPicker } from '../dom.ts';
import { formatCount, formatTime, formatUsd } from '../format.ts';
import { lastHours } from '../window.ts';

type Task = TaskList['tasks'][number];

/** Renders the task list for the last `hours`. */
export async function taskListPage(root: HTMLElement, hours: number, go: (href: string) => void): Promise<void> {
  const { tasks } = await getJson<TaskList>('/v1/tasks', { ...lastHours(hours), limit: 500 });
  root.replaceChildren(
    el('h1', {}, 'Tasks'),
    searchForm(go),
    windowPicker(hours, (h) => go(`/tasks?hours=${h}`)),
    tasks.length
      ? table<Task>(
          `${tasks.length} tasks with calls in the window, most recently active first`,
          [
            { title: 'task', cell: (t) => (t.name === null ? link(taskHref(t.task_id), t.task_id) : el('span', {}, link(taskHref(t.task_id), t.name), ' ', el('code', { class: 'hint' }, t.task_id))), sort: (t) => t.name ?? t.task_id },
            { title: 'last call (UTC)', cell: (t) => formatTime(t.last_call), sort: (t) => t.last_call },
            { title: 'calls', cell: (t) => formatCount(t.calls), sort: (t) => t.calls, numeric: true },
            { title: 'failed', cell: (t) => (t.failures ? el('span', { class: 'bad' }, formatCount(t.failures)) : '0'), sort: (t) => t.failures, numeric: true },
            { title: 'tool cost', cell: (t) => formatUsd(t.total_cost_usd), sort: (t) => t.total_cost_usd, numeric: true },
            { title: 'model turns', cell: (t) => formatCount(t.model_turns), sort: (t) => t.model_turns, numeric: true },
            { title: 'model tokens in / out', cell: (t) => `${formatCount(t.model_input_tokens)} / ${formatCount(t.model_output_tokens)}`, sort: (t) => t.model_input_tokens + t.model_output_tokens, numeric: true },
            { title: 'model cost', cell: (t) => formatUsd(t.model_cost_usd), sort: (t) => t.model_cost_usd, numeric: true },
            { title: 'agents', cell: (t) => t.agents.join(', ') },
          ],
          tasks,
          { testId: 'task-table' },
        )
      : el('p', { role: 'status' }, 'No tasks in this window. Load a workload with `npx tool-audit demo`.'),
  );
}

/** The task id search box (also in the header): opens /tasks/{id}. */
export function searchForm(go: (href: string) => void, id = 'task-search'): HTMLElement {
  const input = el('input', { type: 'search', id, name: 'task_id', placeholder: 'task id', required: true, autocomplete: 'off' });
  const form = el('form', { role: 'search', class: 'search', 'aria-label': 'Find a task' }, el('label', { for: id, class: 'sr-only' }, 'Task id'), input, el('button', { type: 'submit' }, 'Open task'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const v = input.value.trim();
    if (v) go(taskHref(v));
  });
  return form;
}
