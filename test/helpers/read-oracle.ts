/**
 * Expected answers of the read API, computed in plain TypeScript from the generated workload
 * (never from the SQL under test). Orders follow the API contract: ties on a timestamp are
 * broken by call_id in ClickHouse's UUID order (second half of the UUID, then the first).
 */
import type { GenDependency, GenInvocation, GenOutput, GenViolation, Workload } from './read-workload.ts';

/** A half-open window in ms. */
export interface Win {
  from: number;
  to: number;
}

const ms = (iso: string) => Date.parse(iso);
const inWin = (iso: string, w: Win) => ms(iso) >= w.from && ms(iso) < w.to;
/** ClickHouse's UUID order as a sortable string. */
export const uuidKey = (u: string) => {
  const h = u.replace(/-/g, '').toLowerCase();
  return h.slice(16) + h.slice(0, 16);
};
/** Ascending order of two strings (by code unit, as ClickHouse orders String) or two numbers. */
export const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);

/** The API form of a generated invocation. */
/** A failed call's error_category from its result_summary (a string; '' counts as none); null for a success. */
export function errorCategory(i: GenInvocation): string | null {
  const c = i.status === 'success' ? undefined : i.result_summary.error_category;
  return typeof c === 'string' && c !== '' ? c : null;
}

export function apiInvocation(i: GenInvocation) {
  return {
    call_id: i.call_id,
    task_id: i.task_id ?? null,
    tool_id: i.tool_id,
    agent_id: i.agent_id,
    orchestrator: i.orchestrator,
    instance_id: i.instance_id ?? i.orchestrator,
    args: i.args,
    args_hash: i.args_hash,
    status: i.status,
    success: i.status === 'success',
    duration_ms: i.duration_ms,
    result_summary: i.result_summary,
    error: i.error ?? null,
    error_category: errorCategory(i),
    cost_usd: i.cost_usd ?? null,
    expensive: i.cost_usd !== null && i.cost_usd !== undefined && i.cost_usd > 1.0,
    tokens_used: i.tokens_used ?? null,
    created_at: new Date(ms(i.created_at)).toISOString(),
  };
}

const newestFirst = (a: GenInvocation, b: GenInvocation) => cmp(ms(b.created_at), ms(a.created_at)) || cmp(uuidKey(b.call_id), uuidKey(a.call_id));
const callOrder = (a: GenInvocation, b: GenInvocation) => -newestFirst(a, b);

/** numpy's default percentile (linear interpolation between closest ranks). */
export function percentile(values: number[], q: number): number {
  const x = [...values].sort((a, b) => a - b);
  const h = (x.length - 1) * q;
  const lo = Math.floor(h);
  return (x[lo] as number) + (h - lo) * ((x[Math.min(lo + 1, x.length - 1)] as number) - (x[lo] as number));
}

function countBy<T>(xs: T[], key: (x: T) => string | null): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) {
    const k = key(x);
    if (k !== null) out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** The whole oracle over one workload. */
export function oracle(w: Workload) {
  const inv = w.invocations;
  return {
    toolStats(tool: string, win: Win) {
      const xs = inv.filter((i) => i.tool_id === tool && inWin(i.created_at, win));
      const n = xs.length;
      return {
        tool_id: tool,
        invocations: n,
        success_rate: n ? xs.filter((i) => i.status === 'success').length / n : null,
        avg_duration_ms: n ? xs.reduce((s, i) => s + i.duration_ms, 0) / n : null,
        p95_duration_ms: n ? percentile(xs.map((i) => i.duration_ms), 0.95) : null,
        total_cost_usd: xs.reduce((s, i) => s + (i.cost_usd ?? 0), 0),
        error_distribution: countBy(xs, (i) => i.error ?? null),
      };
    },
    toolInvocations: (tool: string, win: Win) => inv.filter((i) => i.tool_id === tool && inWin(i.created_at, win)).sort(newestFirst).map(apiInvocation),
    agent(agent: string, win: Win) {
      const xs = inv.filter((i) => i.agent_id === agent && inWin(i.created_at, win)).sort(newestFirst);
      return { tool_frequency: countBy(xs, (i) => i.tool_id), invocations: xs.map(apiInvocation) };
    },
    task(task: string) {
      const calls = inv.filter((i) => i.task_id === task).sort(callOrder);
      const ids = new Set(calls.map((c) => c.call_id));
      const deps = w.dependencies.filter((d) => d.task_id === task && (ids.has(d.preceding_call_id) || ids.has(d.succeeding_call_id)));
      return {
        // The task view also serves each call's approval and redactions (none in this workload).
        invocations: calls.map((c) => ({ ...apiInvocation(c), approval: null, redactions: [] })),
        dependencies: deps.map((d) => ({ ...d, origin: 'emitted' })),
        outputs: w.outputs.filter((o) => ids.has(o.call_id)).map(apiOutput),
        edges: deps
          .filter((d) => ids.has(d.preceding_call_id) && ids.has(d.succeeding_call_id))
          .map((d) => ({ from: d.preceding_call_id, to: d.succeeding_call_id, time_delta_ms: d.time_delta_ms, data_flow: d.data_flow })),
      };
    },
    expensive(threshold: number, win: Win) {
      const xs = inv
        .filter((i) => i.cost_usd !== null && i.cost_usd > threshold && inWin(i.created_at, win))
        .sort((a, b) => cmp(b.cost_usd as number, a.cost_usd as number) || cmp(uuidKey(b.call_id), uuidKey(a.call_id)));
      return { invocations: xs.map(apiInvocation), count: xs.length, total_cost_usd: xs.reduce((s, i) => s + (i.cost_usd as number), 0) };
    },
    slow(threshold: number, win: Win) {
      const xs = inv
        .filter((i) => i.duration_ms > threshold && inWin(i.created_at, win))
        .sort((a, b) => cmp(b.duration_ms, a.duration_ms) || cmp(uuidKey(b.call_id), uuidKey(a.call_id)));
      return { invocations: xs.map(apiInvocation), count: xs.length };
    },
    failed(win: Win, category?: string) {
      const of = (i: GenInvocation) => category === undefined || errorCategory(i) === category;
      const xs = inv.filter((i) => i.status !== 'success' && inWin(i.created_at, win) && of(i)).sort(newestFirst);
      const all = inv.filter((i) => inWin(i.created_at, win) && of(i));
      return {
        errors: xs.map(apiInvocation),
        count: xs.length,
        error_distribution: countBy(xs, (i) => i.status),
        category_distribution: countBy(xs, (i) => errorCategory(i) ?? '(none)'),
        frequent_errors: countBy(all, (i) => i.error ?? null),
      };
    },
    dedup(minCount: number, win: Win) {
      const groups = new Map<string, GenInvocation[]>();
      for (const i of inv.filter((x) => inWin(x.created_at, win))) {
        const k = `${i.tool_id}\u0000${i.args_hash}`;
        groups.set(k, [...(groups.get(k) ?? []), i]);
      }
      const out = [...groups.values()]
        .filter((g) => g.length >= minCount)
        .map((g) => {
          const sorted = [...g].sort((a, b) => ms(a.created_at) - ms(b.created_at));
          const first = sorted[0] as GenInvocation;
          return {
            tool_id: first.tool_id,
            args_hash: first.args_hash,
            count: g.length,
            potential_savings_ms: g.reduce((s, i) => s + i.duration_ms, 0) - first.duration_ms,
            potential_savings_usd: g.reduce((s, i) => s + (i.cost_usd ?? 0), 0) - (first.cost_usd ?? 0),
            first_seen: new Date(ms(first.created_at)).toISOString(),
            last_seen: new Date(ms((sorted[sorted.length - 1] as GenInvocation).created_at)).toISOString(),
          };
        })
        .sort((a, b) => b.count - a.count || b.potential_savings_ms - a.potential_savings_ms || cmp(a.args_hash, b.args_hash) || cmp(a.tool_id, b.tool_id));
      return {
        groups: out,
        totals: {
          groups: out.length,
          duplicate_calls: out.reduce((s, g) => s + g.count - 1, 0),
          potential_savings_ms: out.reduce((s, g) => s + g.potential_savings_ms, 0),
          potential_savings_usd: out.reduce((s, g) => s + g.potential_savings_usd, 0),
        },
      };
    },
    identicalOutputs(minCount: number, win: Win, tool?: string) {
      const groups = new Map<string, GenOutput[]>();
      for (const o of w.outputs.filter((x) => inWin(x.created_at, win) && (!tool || x.tool_id === tool))) {
        const k = `${o.tool_id}\u0000${o.content_hash}`;
        groups.set(k, [...(groups.get(k) ?? []), o]);
      }
      return [...groups.values()]
        .filter((g) => g.length >= minCount)
        .map((g) => ({
          content_hash: (g[0] as GenOutput).content_hash,
          tool_id: (g[0] as GenOutput).tool_id,
          count: g.length,
          call_ids: [...g].sort((a, b) => ms(a.created_at) - ms(b.created_at) || cmp(uuidKey(a.call_id), uuidKey(b.call_id))).map((o) => o.call_id),
        }))
        .sort((a, b) => b.count - a.count || cmp(a.content_hash, b.content_hash) || cmp(a.tool_id, b.tool_id));
    },
    toolOutputs(tool: string, win: Win) {
      const groups = new Map<string, GenOutput[]>();
      for (const o of w.outputs.filter((x) => x.tool_id === tool && inWin(x.created_at, win))) groups.set(o.content_hash, [...(groups.get(o.content_hash) ?? []), o]);
      return [...groups.values()]
        .map((g) => {
          const sorted = [...g].sort((a, b) => ms(a.created_at) - ms(b.created_at));
          const first = sorted[0] as GenOutput;
          return {
            content_hash: first.content_hash,
            content_type: first.content_type,
            size_bytes: first.size_bytes,
            sample: first.sample,
            count: g.length,
            first_seen: new Date(ms(first.created_at)).toISOString(),
            last_seen: new Date(ms((sorted[sorted.length - 1] as GenOutput).created_at)).toISOString(),
          };
        })
        .sort((a, b) => cmp(ms(b.last_seen), ms(a.last_seen)) || cmp(b.content_hash, a.content_hash));
    },
    sequences(length: number, minCount: number, win: Win) {
      const byTask = new Map<string, GenInvocation[]>();
      for (const i of inv.filter((x) => x.task_id !== null && inWin(x.created_at, win))) byTask.set(i.task_id as string, [...(byTask.get(i.task_id as string) ?? []), i]);
      const counts = new Map<string, number>();
      for (const calls of byTask.values()) {
        const tools = [...calls].sort(callOrder).map((c) => c.tool_id);
        for (let s = 0; s + length <= tools.length; s++) {
          const k = JSON.stringify(tools.slice(s, s + length));
          counts.set(k, (counts.get(k) ?? 0) + 1);
        }
      }
      return [...counts.entries()]
        .filter(([, n]) => n >= minCount)
        .map(([k, n]) => ({ tools: JSON.parse(k) as string[], count: n }))
        .sort((a, b) => b.count - a.count || cmp(JSON.stringify(a.tools), JSON.stringify(b.tools)));
    },
    /** `by.task`: violations naming one of the task's calls; `by.call`: naming that id; `by.tool`: naming one of the tool's calls. */
    violations(win: Win, invariant?: string, by: { task?: string; call?: string; tool?: string } = {}) {
      const calls = by.task === undefined ? undefined : new Set(w.invocations.filter((i) => i.task_id === by.task).map((i) => i.call_id));
      const toolCalls = by.tool === undefined ? undefined : new Set(w.invocations.filter((i) => i.tool_id === by.tool).map((i) => i.call_id));
      const xs = w.violations
        .filter((v) => inWin(v.detected_at, win) && (!invariant || v.invariant === invariant))
        .filter((v) => (!calls || v.ids.some((id) => calls.has(id))) && (by.call === undefined || v.ids.includes(by.call)))
        .filter((v) => !toolCalls || v.ids.some((id) => toolCalls.has(id)))
        .sort((a, b) => cmp(ms(b.detected_at), ms(a.detected_at)) || cmp(b.violation_key, a.violation_key));
      const taskOf = new Map(w.invocations.map((i) => [i.call_id, i.task_id]));
      return { violations: xs.map((v) => apiViolation(v, taskOf)), counts: countBy(xs, (v) => v.invariant) };
    },
  };
}

/** The API form of a generated output. */
export function apiOutput(o: GenOutput) {
  return { ...o, created_at: new Date(ms(o.created_at)).toISOString() };
}

/** The API form of a generated violation: task_id is the task of the first of its ids that is a call. */
function apiViolation(v: GenViolation, taskOf: Map<string, string | null>) {
  const call = v.ids.find((id) => taskOf.has(id));
  const task = call === undefined ? null : (taskOf.get(call) ?? null);
  return { invariant: v.invariant, packet_type: v.packet_type, ids: v.ids, detail: v.detail, detected_at: new Date(ms(v.detected_at)).toISOString(), task_id: task };
}

/** Sorts dependencies by pair (for order-free comparison). */
export const byPair = (a: GenDependency, b: GenDependency) => cmp(a.preceding_call_id + a.succeeding_call_id, b.preceding_call_id + b.succeeding_call_id);
