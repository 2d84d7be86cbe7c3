/**
 * /tasks/{task_id}: one task as a waterfall — a bar per call from created_at over duration_ms,
 * coloured by status, dependency arrows (solid blue where data flowed), the task's violations
 * beside the calls they concern, the agent runs that name the task, the model turns, totals, and
 * the clicked call's detail (also in the URL as
 * ?call=, so a call can be shared). The canvas is decorative for assistive technology: every
 * bar is also a list item whose button carries its text, laid over the bar's row.
 */
import type { Chart } from 'chart.js';
import type { TaskView, Violations } from '../../../schemas/answers.ts';
import { getJson } from '../api.ts';
import { ROW_PX, waterfallChart } from '../charts.ts';
import { el, facts } from '../dom.ts';
import { formatCount, formatMs, formatUsd } from '../format.ts';
import { STATUS_COLOURS, taskModel, type TaskModel } from '../task-model.ts';
import { callDetail } from './call-detail.ts';

/** Fetches every page of a task (limit 1000 per page). */
export async function fetchTask(taskId: string): Promise<TaskView> {
  const path = `/v1/tasks/${encodeURIComponent(taskId)}`;
  let view = await getJson<TaskView>(path, { limit: 1000 });
  for (let pages = 1; view.next_cursor && pages < 20; pages++) {
    const next = await getJson<TaskView>(path, { limit: 1000, cursor: view.next_cursor });
    const seen = new Set(view.dependencies.map((d) => `${d.preceding_call_id}>${d.succeeding_call_id}`));
    const turnsSeen = new Set(view.model_turns.map((t) => t.turn_id));
    view = {
      ...next,
      invocations: [...view.invocations, ...next.invocations],
      outputs: [...view.outputs, ...next.outputs],
      dependencies: [...view.dependencies, ...next.dependencies.filter((d) => !seen.has(`${d.preceding_call_id}>${d.succeeding_call_id}`))],
      model_turns: [...view.model_turns, ...next.model_turns.filter((t) => !turnsSeen.has(t.turn_id))],
    };
  }
  return view;
}

/**
 * Every violation naming a call of the task, found by the server (`task_id`), page by page: found
 * after the task's first call (detected_at follows what it judges), at most 20 pages of 1,000.
 */
async function taskViolations(taskId: string, from: string): Promise<Violations['violations']> {
  const out: Violations['violations'] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const r = await getJson<Violations>('/v1/violations', { task_id: taskId, from, limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...r.violations);
    if (!r.next_cursor) break;
    cursor = r.next_cursor;
  }
  return out;
}

/** Renders the task page into `root`. */
export async function taskPage(root: HTMLElement, taskId: string, selectedCall: string | null): Promise<void> {
  const view = await fetchTask(taskId);
  const violations = view.invocations.length ? await taskViolations(taskId, view.invocations[0]?.created_at ?? '1970-01-01') : [];
  performance.mark('task:data');
  const model = taskModel(view, violations);
  performance.mark('task:model');
  renderTask(root, model, selectedCall);
  performance.mark('task:built');
  // Two frames: the first lays out and paints what renderTask built, the second starts after it.
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  performance.mark('task:rendered');
  performance.measure('task:render', 'task:data', 'task:rendered');
}

/** Builds the page from the model (synchronous: what the benchmark times). */
export function renderTask(root: HTMLElement, model: TaskModel, selectedCall: string | null): void {
  const t = model.totals;
  if (t.calls === 0) {
    root.replaceChildren(heading(model), el('p', { role: 'status' }, 'No calls recorded for this task.'));
    return;
  }
  let selected = model.bars.findIndex((b) => b.call.call_id === selectedCall);
  const detail = el('aside', { class: 'call-detail', 'aria-label': 'Selected call', 'aria-live': 'polite' });
  const canvas = el('canvas', { 'aria-hidden': 'true' });
  const hits = el('ol', { class: 'bar-hits', 'aria-label': `Calls of task ${model.taskId}, in call order` });
  const height = model.bars.length * ROW_PX + 34;
  const wrap = el('div', { class: 'waterfall', style: `height:${height}px` }, canvas, hits);
  // Set once the chart is drawn (after the DOM it measures exists); the handlers read it then.
  const drawn: { chart?: Chart<'bar', [number, number][], string> } = {};

  const select = (i: number) => {
    selected = i;
    const bar = model.bars[i];
    detail.replaceChildren(callDetail(model, bar, select));
    hits.querySelectorAll('button').forEach((b, j) => b.setAttribute('aria-pressed', String(j === i)));
    const chart = drawn.chart;
    if (chart) {
      chart.data.datasets[0]!.borderColor = model.bars.map((b) => (b.index === i ? '#000' : 'transparent'));
      chart.update('none');
    }
    if (bar) history.replaceState(null, '', `${location.pathname}?call=${encodeURIComponent(bar.call.call_id)}`);
  };
  const showTip = (i: number | null) => {
    const chart = drawn.chart;
    if (!chart) return;
    const meta = chart.getDatasetMeta(0).data[i ?? 0];
    chart.tooltip?.setActiveElements(i === null || !meta ? [] : [{ datasetIndex: 0, index: i }], { x: meta?.x ?? 0, y: meta?.y ?? 0 });
    chart.update('none');
  };
  for (const b of model.bars) {
    const button = el(
      'button',
      {
        type: 'button',
        class: 'bar-hit',
        'aria-pressed': String(b.index === selected),
        onclick: () => select(b.index),
        onmouseenter: () => showTip(b.index),
        onmouseleave: () => showTip(null),
        onfocus: () => showTip(b.index),
        onblur: () => showTip(null),
      },
      el('span', { class: 'sr-only' }, b.label),
    );
    hits.append(el('li', { 'data-call-id': b.call.call_id, 'data-status': b.call.status }, button));
  }

  root.replaceChildren(
    heading(model),
    facts('Task totals', [
      ['calls', formatCount(t.calls)],
      ['elapsed', formatMs(t.spanMs)],
      ['time in calls', formatMs(t.busyMs)],
      ['cost', formatUsd(t.costUsd)],
      ['failed calls', formatCount(t.failed)],
      ['violations', formatCount(t.violations)],
      ...(t.turns ? ([['model turns', formatCount(t.turns)], ['model tokens', `${formatCount(t.modelTokensIn)} in / ${formatCount(t.modelTokensOut)} out`], ['model cost', formatUsd(t.modelCostUsd)]] as Array<[string, string]>) : []),
    ]),
    legend(),
    el('div', { class: 'task-grid' }, el('div', { class: 'waterfall-scroll' }, wrap), el('div', { class: 'side' }, runList(model), turnList(model, (i) => select(i)), violationList(model, (i) => select(i)), detail)),
  );
  // One layout read for the canvas size; the chart then draws once at that size.
  canvas.width = wrap.clientWidth;
  canvas.height = height;
  performance.mark('task:dom');
  drawn.chart = waterfallChart(canvas, model, selected >= 0 ? selected : null);
  performance.mark('task:chart');
  placeHits(drawn.chart, hits);
  detail.replaceChildren(callDetail(model, model.bars[selected], select));
}

/** Lays each list item over its bar's row, from the chart's own geometry. */
function placeHits(chart: Chart<'bar', [number, number][], string>, hits: HTMLOListElement): void {
  const area = chart.chartArea;
  chart.getDatasetMeta(0).data.forEach((bar, i) => {
    const item = hits.children[i] as HTMLElement | undefined;
    if (!item) return;
    const { y } = bar.getProps(['y'], true) as { y: number };
    item.style.top = `${y - ROW_PX / 2}px`;
    item.style.height = `${ROW_PX}px`;
    item.style.left = '0';
    item.style.width = `${area.right}px`;
  });
}

function legend(): HTMLElement {
  return el(
    'ul',
    { class: 'legend', 'aria-label': 'Legend' },
    ...Object.entries(STATUS_COLOURS).map(([s, c]) => el('li', {}, el('span', { class: 'swatch', style: `background:${c}` }), s)),
    el('li', {}, el('span', { class: 'arrow flow' }), 'dependency with data flow'),
    el('li', {}, el('span', { class: 'arrow order' }), 'dependency (order only)'),
  );
}

/** The task's name (its outermost agent run's) with its id, or its id alone. */
function heading(model: TaskModel): HTMLElement {
  return model.name === null ? el('h1', {}, 'Task ', el('code', {}, model.taskId)) : el('h1', {}, model.name, ' ', el('small', {}, 'task ', el('code', {}, model.taskId)));
}

/** The task's agent runs, each sub-agent under the run it was started in. */
function runList(model: TaskModel): HTMLElement | null {
  if (!model.runs.length) return null;
  return el(
    'section',
    { class: 'task-runs', 'aria-label': 'Agent runs of this task' },
    el('h2', {}, `Agent runs (${model.runs.length})`),
    el('ol', {}, ...model.runs.map((r) => el('li', { 'data-run-id': r.run.run_id, style: `margin-left:${r.depth * 1.25}em` }, r.label))),
  );
}

/** The task's model turns in order, each with buttons to the calls it asked for. */
function turnList(model: TaskModel, select: (i: number) => void): HTMLElement | null {
  if (!model.turns.length) return null;
  return el(
    'section',
    { class: 'task-turns', 'aria-label': 'Model turns of this task' },
    el('h2', {}, `Model turns (${model.turns.length})`),
    el(
      'ol',
      {},
      ...model.turns.map((t) =>
        el(
          'li',
          { 'data-turn-id': t.turn.turn_id },
          el('span', { class: 'turn-label' }, t.label),
          ...t.asked.map((a) => el('span', {}, ' ', a.bar === undefined ? el('span', { class: 'hint' }, `${a.tool} (not made)`) : el('button', { type: 'button', class: 'linkish', onclick: () => select(a.bar as number) }, `→ #${(a.bar as number) + 1} ${a.tool}`))),
          // Stored only where the deployment keeps them (OTLP_TURN_MESSAGES=on), redacted.
          t.turn.messages === null ? null : el('details', { class: 'turn-messages' }, el('summary', {}, 'messages'), el('pre', {}, t.turn.messages)),
        ),
      ),
    ),
  );
}

function violationList(model: TaskModel, select: (i: number) => void): HTMLElement {
  const items = model.bars.flatMap((b) => b.violations.map((v) => ({ b, v })));
  return el(
    'section',
    { class: 'task-violations', 'aria-label': 'Violations of this task' },
    el('h2', {}, `Violations (${model.violations.length})`),
    items.length
      ? el('ul', {}, ...items.map(({ b, v }) => el('li', {}, el('button', { type: 'button', class: 'linkish', onclick: () => select(b.index) }, `#${b.index + 1} ${b.call.tool_id}`), ' ', el('strong', {}, v.invariant), ` ${v.detail}`)))
      : el('p', { class: 'hint' }, 'None found by the auditor.'),
  );
}
