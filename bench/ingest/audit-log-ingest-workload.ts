/**
 * The packets of bench:audit-log-ingest: tasks of calls with their outputs and declared
 * dependencies, each task whole in one request, made as an emitter sends them. Pure (no I/O).
 */
import { createHash, randomUUID } from 'node:crypto';
import { canonicalArgs, type JsonValue } from '../../schemas/canonical-json.ts';
import { rng } from '../../test/helpers/rng.ts';
import { AGENTS, CHAIN, OTHERS } from '../reads/queries-data.ts';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** The packets of every run: request bodies, and what they hold. */
export interface Workload {
  bodies: Array<{ body: Buffer; packets: number }>;
  calls: number;
  outputs: number;
  dependencies: number;
  packets: number;
  bytes: number;
}

/**
 * N calls in tasks of 4–16 calls, each task whole in one request: an output or a dependency then
 * refers to a call stored by the same request, whichever client sends it and whenever (a call in
 * another client's request in flight would leave the output without its task). A task's calls
 * are 35–45 s apart (as in bench:queries' data), so within the analyzer's 60 s window only
 * consecutive calls are linked; tasks start in the 5 minutes after 20 minutes ago, so every call
 * is made in the past yet arrives well within the analyzer's look-back (it links them through its
 * window, as for live traffic, not through its whole-task path for calls arriving an hour late).
 * A request's packets are in the order they were made, as an emitter sends them: the auditor
 * finds nothing (no time going backwards within an instance — I11 —, no output of a failed call
 * — I8). Contents are distinct: the content table grows as it does in use.
 */
export function workload(calls: number, batch: number): Workload {
  const r = rng(20261128);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const bodies: Workload['bodies'] = [];
  const w = { calls: 0, outputs: 0, dependencies: 0, packets: 0, bytes: 0 };
  let current: Array<{ at: number; text: string }> = [];
  const flush = () => {
    if (current.length === 0) return;
    current.sort((a, b) => a.at - b.at);
    const body = Buffer.from(`[${current.map((p) => p.text).join(',')}]`, 'utf8');
    bodies.push({ body, packets: current.length });
    w.bytes += body.length;
    current = [];
  };
  const from = Date.now() - 20 * 60_000;
  for (let t = 0; w.calls < calls; t++) {
    const task = `bench-task-${String(t).padStart(7, '0')}`;
    const agent = pick(AGENTS);
    const orchestrator = pick(['websocket', 'kernel', 'gateway', 'scheduler'] as const);
    const n = Math.min(calls - w.calls, 4 + Math.floor(r() * 13));
    const packets: Array<{ at: number; text: string }> = [];
    let at = from + Math.floor(r() * 5 * 60_000);
    let prev: { id: string; tool: string; at: number } | undefined;
    for (let i = 0; i < n; i++) {
      const tool = r() < 0.7 ? (CHAIN[i % CHAIN.length] as string) : pick(OTHERS);
      const s = r();
      const status = s < 0.92 ? 'success' : s < 0.95 ? 'timeout' : s < 0.98 ? 'error' : 'rate_limited';
      const args: JsonValue = { query: `${task} step ${i}: quarterly revenue of segment ${Math.floor(r() * 5000)}`, page: i % 5, top_k: 10 };
      const callId = randomUUID();
      packets.push({
        at,
        text: JSON.stringify({
          type: 'tool_call',
          call_id: callId,
          invocation: {
            call_id: callId,
            task_id: task,
            tool_id: tool,
            agent_id: agent,
            orchestrator,
            args,
            args_hash: sha(canonicalArgs(args)),
            status,
            duration_ms: 50 + Math.floor(r() * 3000),
            result_summary: status === 'success' ? { result_count: Math.floor(r() * 20) } : {},
            error: status === 'success' ? null : `${status} after retries`,
            cost_usd: Math.round(r() * 1e5) / 1e7,
            tokens_used: { input_tokens: Math.floor(r() * 2000), output_tokens: Math.floor(r() * 800) },
            created_at: new Date(at).toISOString(),
          },
        }),
      });
      w.calls++;
      // About one output per three calls, successful ones only (I8).
      if (status === 'success' && r() < 0.36) {
        const json = r() < 0.5;
        const content = json
          ? JSON.stringify({ call: callId, rows: Array.from({ length: 3 + Math.floor(r() * 6) }, (_, k) => ({ k, v: Math.round(r() * 1e6) / 100, label: `row ${k} of ${tool}` })) })
          : `Result of ${tool} for ${task} (${callId}): ${'lorem ipsum dolor sit amet '.repeat(4 + Math.floor(r() * 30))}`;
        packets.push({
          at: at + 5,
          text: JSON.stringify({
            type: 'output_artifact',
            output: {
              output_id: randomUUID(),
              call_id: callId,
              tool_id: tool,
              content_type: json ? 'json' : 'text',
              content_hash: sha(content),
              size_bytes: Buffer.byteLength(content),
              sample: content.slice(0, 500),
              created_at: new Date(at + 5).toISOString(),
            },
            content,
          }),
        });
        w.outputs++;
      }
      if (prev && r() < 0.06) {
        packets.push({
          at: at + 1,
          text: JSON.stringify({
            type: 'tool_dependency',
            dependency: { task_id: task, preceding_call_id: prev.id, succeeding_call_id: callId, preceding_tool_id: prev.tool, succeeding_tool_id: tool, time_delta_ms: at - prev.at, data_flow: null },
          }),
        });
        w.dependencies++;
      }
      prev = { id: callId, tool, at };
      at += 35_000 + Math.floor(r() * 10_000);
    }
    if (current.length + packets.length > batch) flush();
    current.push(...packets);
    w.packets += packets.length;
  }
  flush();
  return { bodies, ...w };
}

/** A port nothing listens on now (the kernel's pick, released at once). */
