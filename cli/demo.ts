/**
 * `tool-audit demo`: emits a realistic synthetic workload (SPEC §7) through the running
 * pipeline — POST /v1/packets of the server at --url / TOOL_AUDIT_URL (default
 * http://127.0.0.1:8080), with TOOL_AUDIT_API_KEY when set — so every read pattern and panel
 * has something to show: tasks chaining search → fetch → python → chart, failures of every
 * kind, retries, duplicate calls with identical args, expensive calls, identical outputs,
 * parallel calls, calls without a task, the dependencies between consecutive calls, and one
 * deliberate violation (I4: a timeout without an error message) for the violations view. It
 * first applies a tool manifest (PUT /v1/manifests, demo-manifest.ts; needs the `admin` scope
 * when keys are configured) and adds the three calls that manifest is meant to catch (M1, M3, M6).
 */
import { randomUUID } from 'node:crypto';
import { AppError, errorMessage, serverRefusal } from '../platform/errors.ts';
import { argsHash, describeContent } from '../schemas/hashing.ts';
import type { JsonValue } from '../schemas/canonical-json.ts';
import { parseManifest } from '../schemas/tool-manifest.ts';
import { DEMO_MANIFEST } from './demo-manifest.ts';
import { putManifest } from './manifests.ts';
import { configOrExit } from './runtime.ts';
import { parseArgs } from './task.ts';
import { USAGES } from './usage.ts';

type Rand = () => number;
type Packet = Record<string, unknown>;
type Call = { call_id: string; tool_id: string; at: number; status: string; duration_ms: number };

function prng(seed: number): Rand {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TOPICS = ['quarterly revenue of ACME', 'EU AI act summary', 'best vector databases 2026', 'weather in Zürich', 'latest LLM agent benchmarks'];
const AGENTS = ['L', 'QA_Agent', 'Researcher', 'Analyst'];
const ORCHESTRATORS = ['gateway', 'kernel', 'websocket', 'scheduler'] as const;

type Step = [Call, string | null];

/**
 * The demo's packets, built call by call. Deterministic for a seed (ids aside). Every call of a
 * stream is posted in created_at order, as a real orchestrator sends them: I11 stays quiet.
 */
class DemoBuilder {
  readonly packets: Array<{ at: number; packet: Packet }> = [];
  calls = 0;
  readonly rnd: Rand;

  constructor(seed: number) {
    this.rnd = prng(seed);
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rnd() * xs.length)] as T;
  }

  call(task: string | null, agent: string, tool: string, args: Record<string, JsonValue>, at: number, o: Partial<Packet> & { status?: string } = {}): Call {
    const status = o.status ?? 'success';
    const duration = Number(o.duration_ms ?? Math.floor(80 + this.rnd() ** 2 * 4000));
    const c: Call = { call_id: randomUUID(), tool_id: tool, at, status, duration_ms: duration };
    const invocation = {
      call_id: c.call_id,
      task_id: task,
      tool_id: tool,
      agent_id: agent,
      orchestrator: this.pick(ORCHESTRATORS),
      args,
      args_hash: argsHash(args),
      status,
      duration_ms: duration,
      result_summary: o.result_summary ?? {},
      error: o.error ?? null,
      cost_usd: o.cost_usd ?? null,
      tokens_used: o.tokens_used ?? null,
      created_at: new Date(at).toISOString(),
      ...(o.approval ? { approval: o.approval } : {}),
    };
    this.packets.push({ at, packet: { type: 'tool_call', call_id: c.call_id, invocation } });
    this.calls++;
    return c;
  }

  output(c: Call, contentType: string, content: string): void {
    const d = describeContent(content);
    const at = c.at + c.duration_ms;
    this.packets.push({
      at,
      packet: { type: 'output_artifact', output: { output_id: randomUUID(), call_id: c.call_id, tool_id: c.tool_id, content_type: contentType, ...d, created_at: new Date(at).toISOString() }, content },
    });
  }

  /** The emitted dependencies of a chain: consecutive calls the analyzer would also link (SPEC §4). */
  chain(task: string, steps: Step[]): void {
    for (let i = 1; i < steps.length; i++) {
      const [a] = steps[i - 1] as Step;
      const [b, flow] = steps[i] as Step;
      const delta = b.at - a.at;
      if (delta <= 0 || delta >= 60_000) continue;
      this.packets.push({
        at: b.at,
        packet: {
          type: 'tool_dependency',
          dependency: { task_id: task, preceding_call_id: a.call_id, succeeding_call_id: b.call_id, preceding_tool_id: a.tool_id, succeeding_tool_id: b.tool_id, time_delta_ms: delta, data_flow: flow },
        },
      });
    }
  }

  /** The packets in created_at order (stable: a call before its output and dependencies). */
  sorted(): Packet[] {
    return this.packets
      .map((p, i) => ({ ...p, i }))
      .sort((x, y) => x.at - y.at || x.i - y.i)
      .map((p) => p.packet);
  }
}

/** A search, retried once now and then after a rate limit (the retry has the same args: a duplicate call). */
function search(b: DemoBuilder, task: string, agent: string, topic: string, at: number, steps: Step[]): { call: Call; at: number } {
  const args = { query: topic, top_k: 5 };
  const ok = { result_summary: { result_count: 5, urls_returned: 5 }, cost_usd: 0.005 };
  if (b.rnd() < 0.15) {
    steps.push([b.call(task, agent, 'search_web', args, at, { status: 'rate_limited', error: 'rate limit exceeded (429): retry after 2 s', duration_ms: 40, cost_usd: 0 }), null]);
    at += 2000;
  }
  return { call: b.call(task, agent, 'search_web', args, at, ok), at };
}

/** One task: search → fetch 1–3 pages → python → chart → LLM summary (→ image now and then). */
function demoTask(b: DemoBuilder, task: string, t: number, start: number): void {
  const agent = b.pick(AGENTS);
  const topic = b.pick(TOPICS);
  const steps: Step[] = [];
  let at = start;
  const step = () => (at += 300 + Math.floor(b.rnd() * 15_000));
  const s = search(b, task, agent, topic, at, steps);
  at = s.at;
  const urls = Array.from({ length: 5 }, (_, i) => `https://example.com/${encodeURIComponent(topic.split(' ')[0] as string)}/${i}`);
  // Same topic, same results: identical outputs across tasks.
  b.output(s.call, 'json', JSON.stringify({ query: topic, results: urls.map((u, i) => ({ rank: i + 1, url: u })) }));
  steps.push([s.call, null]);
  step();
  const pages = 1 + Math.floor(b.rnd() * 3);
  for (let p = 0; p < pages; p++) {
    // Two fetches in parallel (same millisecond) now and then.
    if (!(p > 0 && b.rnd() < 0.3)) step();
    const r = b.rnd();
    // A timed-out call is measured a little past its 30 s timeout: the slow-calls view shows it.
    const failure = r < 0.08 ? { status: 'timeout', error: 'timeout after 30000 ms', duration_ms: 30_000 + Math.floor(20 + b.rnd() * 400) } : r < 0.14 ? { status: 'error', error: 'HTTP 503 Service Unavailable' } : {};
    const f = b.call(task, agent, 'fetch_url', { url: urls[p] as string }, at, { result_summary: { status_code: failure.status ? 0 : 200 }, ...failure });
    if (f.status === 'success') b.output(f, 'html', `<html><head><title>${topic}</title></head><body><p>page ${p} about ${topic}</p></body></html>`);
    steps.push([f, 'url from search results']);
  }
  step();
  const crash = b.rnd() < 0.1;
  const py = b.call(task, agent, 'python_execute', { code: `rows = parse(pages)\nprint(summary(rows, top=${1 + (t % 3)}))` }, at, {
    result_summary: { exit_code: crash ? 1 : 0, stdout_lines: crash ? 0 : 12 },
    ...(crash ? { status: 'error', error: 'ZeroDivisionError: division by zero' } : {}),
  });
  if (!crash) b.output(py, 'text', `summary of ${topic}: 12 rows, top ${1 + (t % 3)}`);
  steps.push([py, 'page text parsed by python']);
  if (!crash) {
    step();
    const chart = b.call(task, agent, 'create_chart', { chart_type: b.pick(['bar', 'line']), title: topic }, at, { result_summary: { points: 12 } });
    b.output(chart, 'chart_id', `chart_${chart.call_id.slice(0, 8)}`);
    steps.push([chart, 'python output as chart data']);
  }
  step();
  const tokens = Math.floor(500 + b.rnd() ** 4 * 120_000);
  const llm = { cost_usd: Math.round(tokens * 0.00001 * 1e6) / 1e6, tokens_used: { input_tokens: tokens, output_tokens: 600 }, duration_ms: 1500 + Math.floor(tokens / 20) };
  steps.push([b.call(task, agent, 'llm_summarize', { max_tokens: 800, source: topic }, at, llm), null]);
  // An image now and then; the first task's is a large one, so every demo has an expensive call.
  if (t === 0 || b.rnd() < 0.25) {
    step();
    const cost = t === 0 ? 1.85 : Math.round((0.04 + b.rnd() ** 3 * 2.5) * 1e4) / 1e4;
    steps.push([b.call(task, agent, 'image_generate', { prompt: `infographic: ${topic}`, size: t === 0 ? '4096x4096' : '1024x1024' }, at, { cost_usd: cost, duration_ms: 8000 }), null]);
  }
  b.chain(task, steps);
}

/**
 * What the demo manifest (demo-manifest.ts) is meant to catch, once each: a tool it does not
 * declare (M1), a run past its timeout reported as a success (M3), and a task reading the
 * untrusted, private inbox and then posting to a webhook (M6, the lethal trifecta). The webhook
 * requires approval: its call carries one, given half a second before it (no M9).
 */
function manifestOffences(b: DemoBuilder, task: string, at: number): void {
  b.call(null, 'Ops', 'legacy_export', { format: 'csv' }, at, { duration_ms: 900 });
  b.call(null, 'Ops', 'python_execute', { code: 'backfill(days=30)' }, at + 10_000, { duration_ms: 75_000, result_summary: { exit_code: 0 } });
  const read = b.call(task, 'Ops', 'mail_read', { folder: 'support', unread: true }, at + 20_000, { duration_ms: 400 });
  const approval = { approved_by: 'ops-lead', approved_at: new Date(at + 20_500).toISOString(), reference: 'CHG-2041' };
  const post = b.call(task, 'Ops', 'webhook_post', { url: 'https://partner.example.com/hook' }, at + 21_000, { duration_ms: 300, approval });
  b.chain(task, [
    [read, null],
    [post, 'inbox messages posted to the webhook'],
  ]);
}

/** Builds the packets of the demo workload (pure, deterministic for a seed). */
export function demoPackets(opts: { tasks: number; seed: number; endMs: number; hours: number }): { packets: Packet[]; calls: number; tasks: string[] } {
  const b = new DemoBuilder(opts.seed);
  const taskIds: string[] = [];
  const spanMs = opts.hours * 3_600_000;
  for (let t = 0; t < opts.tasks; t++) {
    const task = `demo-${opts.seed}-${String(t).padStart(4, '0')}`;
    taskIds.push(task);
    demoTask(b, task, t, opts.endMs - spanMs + Math.floor((t / opts.tasks) * spanMs * 0.95) + Math.floor(b.rnd() * 60_000));
  }
  // Calls outside any task: health probes with identical args (duplicates), one invalid input.
  const probes = Math.max(3, Math.floor(opts.tasks / 5));
  for (let i = 0; i < probes; i++) b.call(null, 'Ops', 'fetch_url', { url: 'https://status.example.com/health' }, opts.endMs - (probes - i) * 600_000 - 1000, { duration_ms: 90 });
  b.call(null, 'Ops', 'create_chart', { chart_type: 'pie' }, opts.endMs - 5000, { status: 'invalid_input', error: "missing field 'data'", duration_ms: 3 });
  // The one packet violation the demo means to show: a tool that timed out without saying why (I4).
  b.call(null, 'Ops', 'python_execute', { code: 'train(model, epochs=500)' }, opts.endMs - 3000, { status: 'timeout', error: null, duration_ms: 30_150 });
  manifestOffences(b, `demo-${opts.seed}-ops`, opts.endMs - 240_000);
  return { packets: b.sorted(), calls: b.calls, tasks: taskIds };
}

/** PUTs the demo manifest; a server refusing it (a key without `admin`) leaves the manifest views empty, not the demo. */
async function applyDemoManifest(url: string, apiKey: string | undefined): Promise<void> {
  const parsed = parseManifest(DEMO_MANIFEST);
  // The demo's own manifest: refused, it is a bug of this file.
  if (!parsed.ok) throw new AppError('INTERNAL', `demo manifest: ${parsed.errors.join('; ')}`, { retryable: false });
  try {
    const v = await putManifest(url, apiKey, parsed.manifest);
    process.stdout.write(`demo: manifest version ${v.version} applied (${v.tools} tools)\n`);
  } catch (err) {
    process.stderr.write(`demo: manifest not applied (${errorMessage(err)}); the manifest and cache views stay empty\n`);
  }
}

/** `tool-audit demo [--tasks N] [--seed S] [--hours H] [--url URL]`. */
export async function demo(argv: string[]): Promise<void> {
  const { flags } = parseArgs(argv);
  const config = configOrExit();
  const url = (flags.url ?? config.client.url ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const tasks = Number(flags.tasks ?? 40);
  const seed = Number(flags.seed ?? Date.now() % 100_000);
  const hours = Number(flags.hours ?? 24);
  if (![tasks, seed, hours].every((n) => Number.isFinite(n) && n > 0) || tasks > 100_000) {
    process.stderr.write(`${USAGES.demo}\n`);
    process.exit(2);
  }
  await applyDemoManifest(url, config.client.apiKey);
  const { packets, calls, tasks: ids } = demoPackets({ tasks, seed, endMs: Date.now() - 60_000, hours });
  const totals = { accepted: 0, rejected: 0, duplicates: 0 };
  const reasons = new Map<string, number>();
  for (let i = 0; i < packets.length; i += 500) {
    const body = packets.slice(i, i + 500).map((p) => JSON.stringify(p)).join('\n');
    let res: Response;
    try {
      res = await fetch(`${url}/v1/packets`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson', ...(config.client.apiKey ? { authorization: `Bearer ${config.client.apiKey}` } : {}) },
        body,
        signal: AbortSignal.timeout(120_000),
      });
    } catch (err) {
      throw new AppError('SERVER_UNAVAILABLE', `cannot reach ${url}/v1/packets (${errorMessage(err)}): start the server (npm start) or pass --url`, { retryable: true, cause: err });
    }
    const text = await res.text();
    if (res.status !== 200) throw serverRefusal(res.status, `POST ${url}/v1/packets answered ${res.status}: ${text.slice(0, 300)}`);
    const r = JSON.parse(text) as { accepted: number; rejected: number; duplicates: number; results: Array<{ reason?: { code: string } }> };
    totals.accepted += r.accepted;
    totals.rejected += r.rejected;
    totals.duplicates += r.duplicates;
    for (const x of r.results) if (x.reason) reasons.set(x.reason.code, (reasons.get(x.reason.code) ?? 0) + 1);
  }
  process.stdout.write(
    `demo: ${packets.length} packets (${calls} calls over ${tasks} tasks, seed ${seed}) → ${url}: accepted ${totals.accepted}, duplicates ${totals.duplicates}, rejected ${totals.rejected}` +
      (reasons.size ? ` (${[...reasons].map(([k, n]) => `${k} ×${n}`).join(', ')})` : '') +
      `\ntry: tool-audit top --url ${url}   ·   tool-audit task ${ids[0]} --url ${url}\n`,
  );
}
