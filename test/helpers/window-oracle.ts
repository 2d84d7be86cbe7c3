/**
 * The answers of the task list, the tools table and the per-tool series computed in plain
 * JavaScript over the calls a test generated (or read back from tool_invocations): the oracle of
 * the aggregate reads (queries/window-aggregates.ts), written from the definitions of the
 * statements they replaced, not from the code under test.
 */
import type { TaskList, ToolSeries, ToolsSummary } from '../../schemas/answers.ts';
import type { RawCall } from './raw-calls.ts';
import { rng } from './rng.ts';

const iso = (ms: number) => new Date(ms).toISOString();
const inWindow = (c: RawCall, from: number, to: number) => c.t >= from && c.t < to;
const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A model turn as the task list counts it. */
export interface RawTurn {
  task_id: string;
  t: number;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
}

/** An agent run as a test stored it: its task, name, start and end (ms). */
export interface RawRun {
  run_id: string;
  task_id: string;
  name: string;
  start: number;
  end: number;
}

/** A task's name: of its runs (whenever they ran), the first to start; then the longest; then the lowest run_id. */
function nameOracle(runs: readonly RawRun[], task: string): string | null {
  const mine = runs.filter((r) => r.task_id === task);
  const best = mine.reduce<RawRun | undefined>((b, r) => {
    if (!b) return r;
    if (r.start !== b.start) return r.start < b.start ? r : b;
    if (r.end - r.start !== b.end - b.start) return r.end - r.start > b.end - b.start ? r : b;
    return r.run_id < b.run_id ? r : b;
  }, undefined);
  return best?.name ?? null;
}

/**
 * GET /v1/tasks: per task with calls in [from, to), last call descending, then task_id; each
 * listed task with its turns in [from, to) and its name from its runs.
 */
export function taskListOracle(calls: readonly RawCall[], from: number, to: number, limit: number, turns: readonly RawTurn[] = [], runs: readonly RawRun[] = []): TaskList {
  const tasks = new Map<string, RawCall[]>();
  for (const c of calls) if (c.task_id !== '' && inWindow(c, from, to)) tasks.set(c.task_id, [...(tasks.get(c.task_id) ?? []), c]);
  const rows = [...tasks].map(([task_id, cs]) => ({
    task_id,
    name: nameOracle(runs, task_id),
    calls: cs.length,
    failures: cs.filter((c) => c.status !== 'success').length,
    total_cost_usd: cs.reduce((s, c) => s + (c.cost_usd ?? 0), 0),
    ...turnFigures(turns.filter((t) => t.task_id === task_id && t.t >= from && t.t < to)),
    agents: [...new Set(cs.map((c) => c.agent_id ?? 'A'))].sort(byteOrder),
    first: Math.min(...cs.map((c) => c.t)),
    last: Math.max(...cs.map((c) => c.t)),
  }));
  rows.sort((a, b) => b.last - a.last || byteOrder(a.task_id, b.task_id));
  return { tasks: rows.slice(0, limit).map(({ first, last, ...r }) => ({ ...r, first_call: iso(first), last_call: iso(last) })) };
}

function turnFigures(ts: readonly RawTurn[]) {
  return {
    model_turns: ts.length,
    model_input_tokens: ts.reduce((s, t) => s + (t.input_tokens ?? 0), 0),
    model_output_tokens: ts.reduce((s, t) => s + (t.output_tokens ?? 0), 0),
    model_cost_usd: ts.reduce((s, t) => s + (t.cost_usd ?? 0), 0),
  };
}

/** quantileExactInclusive(level): h = level·(n − 1) + 1, linear between the ⌊h⌋-th and next value. */
export function exactInclusive(sorted: readonly number[], level: number): number {
  const h = level * (sorted.length - 1) + 1;
  const k = Math.floor(h);
  if (k >= sorted.length) return sorted[sorted.length - 1] as number;
  const a = sorted[k - 1] as number;
  return a + (h - k) * ((sorted[k] as number) - a);
}

/** GET /v1/tools without the server column: per tool, most invoked first, then tool_id. */
export function toolsOracle(calls: readonly RawCall[], from: number, to: number, limit: number): Array<Omit<ToolsSummary['tools'][number], 'server'>> {
  const tools = new Map<string, RawCall[]>();
  for (const c of calls) if (inWindow(c, from, to)) tools.set(c.tool_id, [...(tools.get(c.tool_id) ?? []), c]);
  const rows = [...tools].map(([tool_id, cs]) => ({
    tool_id,
    invocations: cs.length,
    success_rate: cs.filter((c) => c.status === 'success').length / cs.length,
    avg_duration_ms: cs.reduce((s, c) => s + c.duration_ms, 0) / cs.length,
    p95_duration_ms: exactInclusive(cs.map((c) => c.duration_ms).sort((a, b) => a - b), 0.95),
    total_cost_usd: cs.reduce((s, c) => s + (c.cost_usd ?? 0), 0),
  }));
  rows.sort((a, b) => b.invocations - a.invocations || byteOrder(a.tool_id, b.tool_id));
  return rows.slice(0, limit);
}

/** GET /v1/tools/series: buckets of bucketS seconds from the epoch, only those with calls. */
export function seriesOracle(calls: readonly RawCall[], from: number, to: number, bucketS: number): ToolSeries {
  const points = new Map<string, Map<number, { calls: number; cost_usd: number }>>();
  for (const c of calls.filter((x) => inWindow(x, from, to))) {
    const t = Math.floor(c.t / (bucketS * 1000)) * bucketS * 1000;
    const tool = points.get(c.tool_id) ?? new Map<number, { calls: number; cost_usd: number }>();
    points.set(c.tool_id, tool);
    const p = tool.get(t) ?? { calls: 0, cost_usd: 0 };
    tool.set(t, { calls: p.calls + 1, cost_usd: p.cost_usd + (c.cost_usd ?? 0) });
  }
  const series = [...points]
    .sort(([a], [b]) => byteOrder(a, b))
    .map(([tool_id, ps]) => ({ tool_id, points: [...ps].sort(([a], [b]) => a - b).map(([t, p]) => ({ time: iso(t), ...p })) }));
  return { bucket_s: bucketS, series };
}

const HOUR = 3_600_000;

/**
 * Windows over [start, end): random millisecond edges, edges on hours and days, on a call's
 * own created_at, inside one hour, empty, before and after every call, and everything.
 */
export function windowsOver(start: number, end: number, callTimes: readonly number[], seed: number, n: number): Array<[number, number]> {
  const r = rng(seed);
  const at = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo));
  const hourOf = (t: number) => Math.floor(t / HOUR) * HOUR;
  const out: Array<[number, number]> = [
    [0, Date.UTC(2200, 0, 1)],
    [start - 10 * HOUR, start - HOUR],
    [end + HOUR, end + 30 * HOUR],
    [hourOf(start) + 5 * HOUR, hourOf(start) + 5 * HOUR],
    [Math.ceil(start / 86_400_000) * 86_400_000, Math.floor(end / 86_400_000) * 86_400_000],
  ];
  for (let i = 0; out.length < n; i++) {
    const a = at(start - 2 * HOUR, end + 2 * HOUR);
    const b = at(start - 2 * HOUR, end + 2 * HOUR);
    const [lo, hi] = a <= b ? [a, b] : [b, a];
    const kind = i % 6;
    if (kind === 0) out.push([lo, hi]);
    else if (kind === 1) out.push([hourOf(lo), hourOf(hi)]);
    else if (kind === 2) out.push([hourOf(lo) + at(1, 600_000), hourOf(lo) + at(600_000, HOUR)]);
    else if (kind === 3) out.push([callTimes[at(0, callTimes.length)] as number, callTimes[at(0, callTimes.length)] as number].sort((x, y) => x - y) as [number, number]);
    else if (kind === 4) out.push([Math.floor(lo / 86_400_000) * 86_400_000 + at(0, 3) * HOUR, hi]);
    else out.push([lo, hourOf(hi) + HOUR - 1]);
  }
  return out;
}
