/**
 * A deterministic workload for the read API tests: tasks chaining search → fetch → python →
 * chart, failures of every status (one without an error message), retries, duplicate calls with
 * identical args, expensive calls, parallel calls in the same millisecond, calls without a task,
 * identical outputs, emitted dependencies, and auditor violations. Everything the tests expect
 * is computed from these objects (oracle.ts), never from the SQL under test.
 */
import { createHash } from 'node:crypto';
import { dependency, outputArtifact, toolCall } from './packets.ts';
import { rng as prng } from './rng.ts';

/** A generated tool_call's invocation. */
export interface GenInvocation {
  call_id: string;
  task_id: string | null;
  tool_id: string;
  agent_id: string;
  orchestrator: string;
  instance_id?: string;
  args: Record<string, unknown>;
  args_hash: string;
  status: string;
  duration_ms: number;
  result_summary: Record<string, unknown>;
  error: string | null;
  cost_usd: number | null;
  tokens_used: Record<string, number> | null;
  created_at: string;
}
export interface GenOutput {
  output_id: string;
  call_id: string;
  tool_id: string;
  content_type: string;
  content_hash: string;
  size_bytes: number;
  sample: string;
  created_at: string;
}
export interface GenDependency {
  task_id: string;
  preceding_call_id: string;
  succeeding_call_id: string;
  preceding_tool_id: string;
  succeeding_tool_id: string;
  time_delta_ms: number;
  data_flow: string | null;
}
export interface GenViolation {
  violation_key: string;
  invariant: string;
  packet_type: string;
  ids: string[];
  detail: string;
  detected_at: string;
}
export interface Workload {
  packets: object[];
  invocations: GenInvocation[];
  outputs: GenOutput[];
  dependencies: GenDependency[];
  violations: GenViolation[];
}

/** A UUID derived from a seed string (deterministic, valid v4 layout). */
export function uuidOf(s: string): string {
  const h = createHash('sha256').update(s).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const CHAIN = ['search_web', 'fetch_url', 'python_execute', 'create_chart'];
const EXTRA = ['llm_summarize', 'image_generate'];
const AGENTS = ['L', 'QA_Agent', 'Researcher'];
/** error_category values: tool-smith's, and a tool's own with JSON escapes and non-ASCII. */
const CATEGORIES = ['rate_limit', 'not_found', 'server_error', 'quota "überschritten" \\ 限'];
const FAILURES: Array<[string, string | null]> = [
  ['timeout', 'timeout after 30000 ms'],
  ['error', 'HTTP 503 Service Unavailable'],
  ['error', "KeyError: 'price'"],
  ['rate_limited', 'rate limit exceeded (429)'],
  ['invalid_input', 'invalid input: missing field url'],
];
const POPULAR = ['weather in paris', 'eur usd rate', 'top 10 llm papers'];
const SHARED_CONTENT = ['{"results": 3}', 'same chart', 'Ünïcödé shared text'];

/** Task ids used by the workload; one carries quotes and non-ASCII to exercise binding. */
export function taskIds(n: number): string[] {
  return Array.from({ length: n }, (_, i) => (i === 3 ? `tâche 'ü' #${i} \\ "x"` : `task-${String(i).padStart(3, '0')}`));
}

/** Generates the workload: `tasks` tasks starting after baseMs, plus orphan calls and violations. */
export function generateWorkload(seed: number, baseMs: number, tasks = 16): Workload {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const w: Workload = { packets: [], invocations: [], outputs: [], dependencies: [], violations: [] };
  let n = 0;

  const addCall = (task: string | null, tool: string, at: number, args: Record<string, unknown>, forced?: [string, string | null]) => {
    const [status, error] = forced ?? (rnd() < 0.82 ? ['success', null] : pick(FAILURES));
    // tool-smith's error_category, as the emitters keep it in result_summary: on two failures in three,
    // and on some successes too (where it means nothing: a success has no category). Chosen by the
    // call's number, not by rnd(), so the rest of the workload is unchanged.
    const category = (status === 'success' ? n % 7 === 0 : n % 3 !== 0) ? { error_category: CATEGORIES[n % CATEGORIES.length] } : {};
    const cost =
      tool === 'image_generate' ? Math.round((0.5 + rnd() * 2.5) * 1e4) / 1e4 : tool === 'llm_summarize' ? Math.round(rnd() * 1.3 * 1e4) / 1e4 : tool === 'search_web' ? 0.005 : null;
    const p = toolCall(
      {
        call_id: uuidOf(`${seed}:call:${n++}`),
        tool_id: tool,
        agent_id: task === null ? 'L' : AGENTS[task.length % AGENTS.length],
        orchestrator: pick(['gateway', 'kernel', 'websocket', 'scheduler']),
        args,
        status,
        error,
        duration_ms: status === 'timeout' ? 30_000 : Math.floor(50 + rnd() ** 3 * 40_000),
        result_summary: { result_count: Math.floor(rnd() * 10), ...category },
        cost_usd: cost,
        tokens_used: tool === 'llm_summarize' ? { input_tokens: Math.floor(rnd() * 900), output_tokens: 42 } : null,
        created_at: new Date(at).toISOString(),
      },
      task,
    );
    w.packets.push(p);
    w.invocations.push(p.invocation as unknown as GenInvocation);
    return p.invocation as unknown as GenInvocation;
  };

  const ids = taskIds(tasks);
  ids.forEach((task, t) => {
    let at = baseMs + t * 3_600_000 + Math.floor(rnd() * 600_000);
    const calls: GenInvocation[] = [];
    const steps = 4 + Math.floor(rnd() * 6);
    for (let s = 0; s < steps; s++) {
      const tool = rnd() < 0.8 ? (CHAIN[s % 4] as string) : pick(EXTRA);
      const args = rnd() < 0.3 ? { query: pick(POPULAR) } : { query: `${task} step ${s}`, page: s };
      const c = addCall(task, tool, at, args, t === 5 && s === 1 ? ['error', null] : undefined);
      calls.push(c);
      if (c.status !== 'success' && rnd() < 0.7) {
        // A retry: same tool, same args, a little later.
        at += 1000 + Math.floor(rnd() * 5000);
        calls.push(addCall(task, tool, at, args, ['success', null]));
      }
      if (s === 2 && t % 4 === 0) {
        // A parallel call in the same millisecond (distinct args: not a duplicate).
        calls.push(addCall(task, 'llm_summarize', at, { parallel: true, task, s }));
      }
      at += rnd() < 0.15 ? 70_000 : 1 + Math.floor(rnd() * 20_000);
    }
    for (let i = 1; i < calls.length; i++) {
      const a = calls[i - 1] as GenInvocation;
      const b = calls[i] as GenInvocation;
      const delta = Date.parse(b.created_at) - Date.parse(a.created_at);
      if (delta <= 0 || delta >= 60_000) continue;
      const d = dependency({
        task_id: task,
        preceding_call_id: a.call_id,
        succeeding_call_id: b.call_id,
        preceding_tool_id: a.tool_id,
        succeeding_tool_id: b.tool_id,
        time_delta_ms: delta,
        data_flow: a.tool_id === 'search_web' && b.tool_id === 'fetch_url' ? 'url from search results' : null,
      });
      w.packets.push(d);
      w.dependencies.push(d.dependency as GenDependency);
    }
  });
  for (let i = 0; i < 6; i++) addCall(null, pick(CHAIN), baseMs + i * 777_777, i % 2 ? { query: POPULAR[0] } : { orphan: i });

  for (const c of w.invocations) {
    if (c.status !== 'success' || rnd() < 0.3) continue;
    const content = rnd() < 0.35 ? pick(SHARED_CONTENT) : `output of ${c.call_id} ${'x'.repeat(Math.floor(rnd() * 700))}`;
    const p = outputArtifact(c.call_id, content, 'text', {
      output_id: uuidOf(`${seed}:out:${c.call_id}`),
      tool_id: c.tool_id,
      created_at: new Date(Date.parse(c.created_at) + c.duration_ms).toISOString(),
    });
    w.packets.push(p);
    w.outputs.push(p.output as GenOutput);
  }

  for (let i = 0; i < 25; i++) {
    const inv = pick(['I4', 'I8', 'I9', 'I10', 'I11']);
    w.violations.push({
      violation_key: `v-${seed}-${i}`,
      invariant: inv,
      packet_type: inv === 'I8' ? 'output_artifact' : inv === 'I9' ? 'tool_dependency' : 'tool_call',
      // Most name stored calls (two of them a call each of two tasks, as an I10 pair does), the rest ids nothing stores.
      ids: i % 5 === 4 || w.invocations.length === 0 ? [uuidOf(`${seed}:v:${i}`)] : [...new Set([w.invocations[(i * 37) % w.invocations.length]?.call_id ?? '', ...(i % 3 === 0 ? [w.invocations[(i * 53 + 11) % w.invocations.length]?.call_id ?? ''] : [])])],
      detail: `generated ${inv} #${i}`,
      // Violations 7 and 8 share a detected_at: their order rests on the violation_key tiebreak.
      detected_at: new Date(baseMs + (i === 8 ? 7 : i) * 1_800_000).toISOString(),
    });
  }
  return w;
}
