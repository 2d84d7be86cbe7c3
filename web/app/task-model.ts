/**
 * The task page's data, computed from the read API's answers before anything is drawn (pure:
 * unit-tested, and the browser test checks the DOM against the same API answer): one bar per
 * call from created_at over duration_ms, dependency arrows, outputs and violations per call,
 * and the task's totals.
 */
import type { AgentRunView, Dependency, Invocation, ModelTurnView, Output, TaskView, Violations } from '../../schemas/answers.ts';
import { formatMs, formatUsd } from './format.ts';

/** A violation as GET /v1/violations returns it. */
export type Violation = Violations['violations'][number];

/** One bar of the waterfall. */
export interface Bar {
  index: number;
  call: Invocation;
  /** ms from the task's first call to this call's start / end. */
  start: number;
  end: number;
  outputs: Output[];
  violations: Violation[];
  /** The model turn that asked for this call (index into the turns), when one did. */
  askedBy?: number;
  /** What a screen reader and the tests read for the bar. */
  label: string;
}

/** One model turn, between the calls it follows and the calls it asked for. */
export interface Turn {
  index: number;
  turn: ModelTurnView;
  /** ms from the task's first call to the turn's request and its answer (created_at is the answer). */
  start: number;
  end: number;
  /** The bars of the calls it asked for, in its order (undefined: asked, not (yet) made). */
  asked: Array<{ tool: string; bar: number | undefined }>;
  label: string;
}

/** A dependency between two bars (indexes into the bars). */
export interface Arrow {
  from: number;
  to: number;
  dependency: Dependency;
  dataFlow: boolean;
}

/** Totals of the task. */
export interface TaskTotals {
  calls: number;
  spanMs: number;
  busyMs: number;
  costUsd: number;
  failed: number;
  violations: number;
  turns: number;
  modelTokensIn: number;
  modelTokensOut: number;
  modelCostUsd: number;
}

/** One agent run of the task, nested under the run it was started in. */
export interface Run {
  run: AgentRunView;
  /** How many runs it is nested in (0: an outermost run). */
  depth: number;
  label: string;
}

/** Everything the task page draws. */
export interface TaskModel {
  taskId: string;
  /** The task's name (its outermost agent run's), when a run is stored. */
  name: string | null;
  /** The task's agent runs, outermost first, each after the run it was started in. */
  runs: Run[];
  t0: number;
  bars: Bar[];
  arrows: Arrow[];
  /** The task's model turns, oldest first. */
  turns: Turn[];
  totals: TaskTotals;
  /** Violations of the task (touching any of its calls), newest first. */
  violations: Violation[];
}

/** The bar's text: tool, status, duration, cost, agent (and violations when any). */
export function barLabel(call: Invocation, index: number, violations: number): string {
  const parts = [`#${index + 1} ${call.tool_id}`, call.status, formatMs(call.duration_ms), formatUsd(call.cost_usd), `agent ${call.agent_id}`];
  if (violations > 0) parts.push(violations === 1 ? '1 violation' : `${violations} violations`);
  return parts.join(' · ');
}

/** A turn's text: model, tokens in and out, cost, what it asked for. */
export function turnLabel(t: ModelTurnView, index: number): string {
  const tokens = `${t.input_tokens ?? '?'} in / ${t.output_tokens ?? '?'} out tokens`;
  const asked = t.requested_tool_calls.length ? `asked for ${t.requested_tool_calls.map((q) => q.tool_id).join(', ')}` : 'answered';
  return [`turn ${index + 1} ${t.model}`, t.status, tokens, formatUsd(t.cost_usd), formatMs(t.duration_ms), asked].join(' · ');
}

/** A run's text: name, agent, status, duration. */
export function runLabel(r: AgentRunView): string {
  return [r.name, `agent ${r.agent_id}`, r.status, formatMs(r.duration_ms)].join(' · ');
}

/**
 * The runs in tree order: each after the run whose span it was started under (a sub-agent after
 * its parent), siblings as the view orders them (the first to start first).
 */
export function runTree(runs: readonly AgentRunView[]): Run[] {
  const bySpan = new Map(runs.filter((r) => r.span_id).map((r) => [r.span_id as string, r]));
  const children = new Map<string | null, AgentRunView[]>();
  for (const r of runs) {
    const parent = r.parent_span_id !== null && bySpan.has(r.parent_span_id) && r.parent_span_id !== r.span_id ? r.parent_span_id : null;
    children.set(parent, [...(children.get(parent) ?? []), r]);
  }
  const out: Run[] = [];
  const seen = new Set<AgentRunView>();
  const visit = (r: AgentRunView, depth: number) => {
    if (seen.has(r)) return;
    seen.add(r);
    out.push({ run: r, depth, label: runLabel(r) });
    for (const c of (r.span_id && children.get(r.span_id)) || []) visit(c, depth + 1);
  };
  for (const r of children.get(null) ?? []) visit(r, 0);
  // A cycle of parents (not from one trace) leaves runs unvisited: listed at the top.
  for (const r of runs) visit(r, 0);
  return out;
}

/** Builds the model of a task from its view and the violations found around it. */
export function taskModel(view: TaskView, allViolations: Violation[]): TaskModel {
  const calls = view.invocations;
  const t0 = calls.length ? Math.min(...calls.map((c) => Date.parse(c.created_at))) : 0;
  const indexOf = new Map(calls.map((c, i) => [c.call_id, i]));
  const outputsOf = new Map<string, Output[]>();
  for (const o of view.outputs) outputsOf.set(o.call_id, [...(outputsOf.get(o.call_id) ?? []), o]);
  const violations = allViolations.filter((v) => v.ids.some((id) => indexOf.has(id)));
  const violationsOf = new Map<string, Violation[]>();
  for (const v of violations) for (const id of v.ids) if (indexOf.has(id)) violationsOf.set(id, [...(violationsOf.get(id) ?? []), v]);

  const bars: Bar[] = calls.map((call, index) => {
    const start = Date.parse(call.created_at) - t0;
    const vs = violationsOf.get(call.call_id) ?? [];
    return { index, call, start, end: start + call.duration_ms, outputs: outputsOf.get(call.call_id) ?? [], violations: vs, label: barLabel(call, index, vs.length) };
  });
  const turns: Turn[] = view.model_turns.map((turn, index) => ({
    index,
    turn,
    start: Date.parse(turn.created_at) - t0 - turn.duration_ms,
    end: Date.parse(turn.created_at) - t0,
    asked: turn.requested_tool_calls.map((q) => ({ tool: q.tool_id, bar: q.call_id === null ? undefined : indexOf.get(q.call_id) })),
    label: turnLabel(turn, index),
  }));
  for (const t of turns) for (const a of t.asked) if (a.bar !== undefined) bars[a.bar]!.askedBy ??= t.index;
  const arrows: Arrow[] = [];
  for (const d of view.dependencies) {
    const from = indexOf.get(d.preceding_call_id);
    const to = indexOf.get(d.succeeding_call_id);
    if (from !== undefined && to !== undefined) arrows.push({ from, to, dependency: d, dataFlow: d.data_flow !== null && d.data_flow !== '' });
  }
  return {
    taskId: view.task_id,
    name: view.name,
    runs: runTree(view.agent_runs),
    t0,
    bars,
    arrows,
    turns,
    violations,
    totals: {
      calls: calls.length,
      spanMs: bars.length ? Math.max(...bars.map((b) => b.end)) : 0,
      busyMs: calls.reduce((s, c) => s + c.duration_ms, 0),
      costUsd: calls.reduce((s, c) => s + (c.cost_usd ?? 0), 0),
      failed: calls.filter((c) => c.status !== 'success').length,
      violations: violations.length,
      turns: turns.length,
      modelTokensIn: turns.reduce((s, t) => s + (t.turn.input_tokens ?? 0), 0),
      modelTokensOut: turns.reduce((s, t) => s + (t.turn.output_tokens ?? 0), 0),
      modelCostUsd: turns.reduce((s, t) => s + (t.turn.cost_usd ?? 0), 0),
    },
  };
}

/**
 * The arrows worth drawing: the analyzer links every pair of a task's calls less than 60 s
 * apart, which would bury the chart in lines. Drawn are the pairs where data flowed, the pairs
 * the orchestrator emitted, and each call's nearest predecessor (as `tool-audit task` hangs a
 * call under it); the call detail still lists every dependency.
 */
export function drawnArrows(arrows: Arrow[]): Arrow[] {
  const nearest = new Map<number, Arrow>();
  for (const a of arrows) {
    const n = nearest.get(a.to);
    if (!n || a.dependency.time_delta_ms < n.dependency.time_delta_ms) nearest.set(a.to, a);
  }
  return arrows.filter((a) => a.dataFlow || a.dependency.origin === 'emitted' || nearest.get(a.to) === a);
}

/** Colour of a status, shared by the bars, the legend and the tables. */
export const STATUS_COLOURS: Record<Invocation['status'], string> = {
  success: '#2e7d32',
  error: '#c62828',
  timeout: '#ef6c00',
  rate_limited: '#8e24aa',
  invalid_input: '#6d4c41',
};
