/**
 * The panel beside the waterfall: what a clicked call did — its args, result summary, output
 * samples, dependencies (with data flow) and the violations that concern it.
 */
import { getJson } from '../api.ts';
import { el, facts, json, link, toolHref } from '../dom.ts';
import { formatMs, formatTime, formatUsd, short } from '../format.ts';
import type { Bar, TaskModel } from '../task-model.ts';
import type { OutputContent } from '../../../schemas/answers.ts';

type Output = Bar['outputs'][number];

/** An output: its sample, and its full content on request (GET /v1/outputs/{id}/content). */
function outputBlock(o: Output): HTMLElement {
  const pre = el('pre', { class: 'sample', 'data-testid': 'output-content' }, o.sample ?? '(no sample)');
  const more = el('button', { type: 'button', class: 'linkish', 'data-testid': 'full-content' }, 'show the full content');
  more.addEventListener('click', () => {
    more.disabled = true;
    getJson<OutputContent>(`/v1/outputs/${encodeURIComponent(o.output_id)}/content`).then(
      (c) => {
        pre.textContent = c.content;
        more.replaceWith(el('span', { class: 'hint' }, c.truncated ? `first ${c.content.length} characters of ${c.size_bytes} bytes` : 'full content'));
      },
      (err: unknown) => {
        more.replaceWith(el('span', { class: 'error' }, err instanceof Error ? err.message : String(err)));
      },
    );
  });
  const long = o.sample === null || o.size_bytes > new TextEncoder().encode(o.sample).length;
  return el('div', { class: 'output' }, el('p', {}, `${o.content_type} · ${o.size_bytes} bytes · `, el('code', { title: o.content_hash }, short(o.content_hash, 16)), long ? ' · ' : '', long ? more : null), pre);
}

/** Renders the detail of `bar` (or a hint when nothing is selected). */
export function callDetail(model: TaskModel, bar: Bar | undefined, select: (index: number) => void): HTMLElement {
  if (!bar) return el('p', { class: 'hint' }, 'Click a bar (or focus it and press Enter) to see its args, result and output.');
  const c = bar.call;
  const jump = (i: number) => el('button', { type: 'button', class: 'linkish', onclick: () => select(i) }, `#${i + 1} ${model.bars[i]?.call.tool_id ?? ''}`);
  const deps = model.arrows.filter((a) => a.from === bar.index || a.to === bar.index);
  return el(
    'div',
    { 'data-testid': 'call-detail' },
    el('h2', {}, `#${bar.index + 1} `, link(toolHref(c.tool_id), c.tool_id), el('span', { class: `status s-${c.status}` }, c.status)),
    facts('Call', [
      ['call_id', el('code', {}, c.call_id)],
      ['agent', c.agent_id],
      ['orchestrator', `${c.orchestrator} (${c.instance_id})`],
      ['started', `${formatTime(c.created_at)} (+${formatMs(bar.start)})`],
      ['duration', formatMs(c.duration_ms)],
      ['cost', formatUsd(c.cost_usd)],
      ['tokens', c.tokens_used ? Object.entries(c.tokens_used).map(([k, v]) => `${k} ${v}`).join(', ') : '–'],
      ['asked for by', bar.askedBy === undefined ? '–' : el('span', { 'data-testid': 'asked-by' }, `model turn ${bar.askedBy + 1} (${model.turns[bar.askedBy]?.turn.model ?? ''})`)],
      ['error', c.error ?? '–'],
      ['error category', c.error_category ?? '–'],
      ['approval', c.approval ? `${c.approval.approved_by} at ${formatTime(c.approval.approved_at)}${c.approval.reference ? ` (${c.approval.reference})` : ''}` : '–'],
      ['redacted', c.redactions?.length ? el('span', { 'data-testid': 'redactions' }, ...c.redactions.flatMap((r, i) => [i > 0 ? ', ' : '', el('code', {}, r.pointer), ` (${r.rule})`])) : '–'],
    ]),
    bar.violations.length
      ? el('section', { class: 'violations' }, el('h3', {}, 'Violations'), el('ul', {}, ...bar.violations.map((v) => el('li', {}, el('strong', {}, v.invariant), ` ${v.detail}`))))
      : null,
    deps.length
      ? el(
          'section',
          {},
          el('h3', {}, 'Dependencies'),
          el(
            'ul',
            {},
            ...deps.map((a) =>
              el('li', {}, a.to === bar.index ? el('span', {}, 'after ', jump(a.from)) : el('span', {}, 'before ', jump(a.to)), ` +${formatMs(a.dependency.time_delta_ms)}`, a.dataFlow ? el('span', { class: 'flow' }, ` data flow: ${a.dependency.data_flow}`) : ' (order only)'),
            ),
          ),
        )
      : null,
    el('h3', {}, 'Args'),
    json(c.args),
    el('h3', {}, 'Result summary'),
    json(c.result_summary),
    el('h3', {}, 'Output'),
    bar.outputs.length
      ? el('div', {}, ...bar.outputs.map(outputBlock))
      : el('p', { class: 'hint' }, 'No output recorded.'),
  );
}
