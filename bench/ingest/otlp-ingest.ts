/**
 * `npm run bench:otlp`: what the rest of a trace costs POST /v1/traces, per tool call.
 *
 *   npm run bench:otlp -- [--tool-calls 20000] [--calls-per-request 100] [--clients 4] [--rounds 2] [--warmup 1] [--settle-ms 120000] [--url URL] [--json FILE]
 *
 * `--only tool|heavy`: one workload alone (to profile it). `--url`: a `tool-audit serve` already running without API keys (to profile it, say) instead of one started here.
 * One `tool-audit serve` (embedded ClickHouse, fresh data directory, no Kafka) receives, from
 * `--clients` concurrent clients, OTLP/HTTP protobuf export requests (as the SDKs' exporters send them) of `--calls-per-request` tool calls
 * each, in two workloads of `--tool-calls` calls, alternated `--rounds` times in the same process:
 *
 *  - tool spans only: one `execute_tool` span per call (the call's args and result);
 *  - trace-heavy: ten spans per call as an instrumented agent exports them — the call's
 *    `execute_tool` span, its agent's `invoke_agent` span (an agent run: the others are its
 *    children), four `chat` model turns (tokens, and the first asking for the call by its id) and
 *    four other spans (HTTP client, an inner chain) that are ignored.
 *
 * `--warmup` rounds of both run first and are not counted: a server runs for days, and the first
 * thousands of spans it maps run before the JIT has compiled the mapping (measured: the heavy
 * workload's first round at 0.59–0.65 of the tool-only rate, later ones at 0.8–0.9).
 * It prints tool calls per second of each (the time from the first request to the last answer:
 * the route answers once the packets are stored) and the ratio heavy / tool-only.
 * **Target: ≥ 0.8.** Machines are noisy: compare the ratio of rounds run side by side.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { encodeProtobufTraces } from '../../ingest/otlp/otlp-decode.ts';
import { startServe, type ServeProcess } from '../../test/helpers/web.ts';
import { runBench } from '../bench-process.ts';
import { median } from '../stats.ts';

const { values: opt } = parseArgs({
  options: {
    'tool-calls': { type: 'string', default: '20000' },
    'calls-per-request': { type: 'string', default: '100' },
    clients: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '1' },
    'settle-ms': { type: 'string', default: '120000' },
    url: { type: 'string' },
    only: { type: 'string', default: 'both' },
    json: { type: 'string' },
  },
});
const N = Number(opt['tool-calls']);
const PER = Number(opt['calls-per-request']);
const CLIENTS = Number(opt.clients);
const ROUNDS = Number(opt.rounds);
const WARMUP = Number(opt.warmup);
const SETTLE_MS = Number(opt['settle-ms']);
for (const [k, v] of Object.entries({ 'tool-calls': N, 'calls-per-request': PER, clients: CLIENTS, rounds: ROUNDS })) {
  if (!(Number.isInteger(v) && v >= 1)) throw new Error(`--${k} must be a whole number ≥ 1`);
}
if (!(Number.isInteger(WARMUP) && WARMUP >= 0)) throw new Error('--warmup must be a whole number ≥ 0');
const log = (s: string) => process.stderr.write(`${s}\n`);

type Attr = { key: string; value: { stringValue?: string; intValue?: string } };
const str = (key: string, v: string): Attr => ({ key, value: { stringValue: v } });
const int = (key: string, v: number): Attr => ({ key, value: { intValue: String(v) } });
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** The spans of one tool call: its execute_tool span, and in the heavy workload nine more. */
function callSpans(i: number, heavy: boolean, t0: number): object[] {
  const traceId = hex(16);
  const ns = (ms: number) => String(BigInt(t0 + i * 10 + ms) * 1_000_000n);
  // Every span but the agent's is its child, as in an exported trace (a CHAIN at the root would be a run of its own).
  const root = hex(8);
  const span = (name: string, startMs: number, endMs: number, attributes: Attr[], kind = 1, spanId = hex(8), parent: string | undefined = root) => ({
    traceId, spanId, ...(parent ? { parentSpanId: parent } : {}), name, kind, startTimeUnixNano: ns(startMs), endTimeUnixNano: ns(endMs), attributes,
  });
  const id = `call_${i}`;
  const tool = span(`execute_tool search_${i % 20}`, 5, 8, [
    str('gen_ai.operation.name', 'execute_tool'),
    str('gen_ai.tool.name', `search_${i % 20}`),
    str('gen_ai.tool.call.id', id),
    str('gen_ai.tool.call.arguments', JSON.stringify({ query: `question ${i}`, top_k: 5 })),
    str('gen_ai.tool.call.result', `answer to question ${i}`),
  ]);
  if (!heavy) return [tool];
  const chat = (n: number) =>
    span('chat gpt-4o', n, n + 1, [
      str('gen_ai.operation.name', 'chat'),
      str('gen_ai.request.model', 'gpt-4o'),
      str('gen_ai.provider.name', 'openai'),
      int('gen_ai.usage.input_tokens', 1200 + n),
      int('gen_ai.usage.output_tokens', 40),
      str('gen_ai.output.messages', JSON.stringify([{ role: 'assistant', parts: n === 1 ? [{ type: 'tool_call', id, name: `search_${i % 20}`, arguments: {} }] : [{ type: 'text', content: 'ok' }] }])),
    ], 3);
  return [
    span('invoke_agent planner', 0, 9, [str('gen_ai.operation.name', 'invoke_agent'), str('gen_ai.agent.name', 'planner')], 1, root, undefined),
    chat(1),
    tool,
    chat(2),
    chat(3),
    chat(4),
    span('POST', 2, 3, [str('http.request.method', 'POST'), str('url.full', 'https://api.example/v1')], 3),
    span('RunnableSequence', 1, 8, [str('openinference.span.kind', 'CHAIN')]),
    span('GET', 6, 7, [str('http.request.method', 'GET'), str('url.full', 'https://search.example/q')], 3),
    span('parse', 7, 8, []),
  ];
}

/** CPU seconds (user + system) the process has used, from /proc (Linux); undefined elsewhere. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Waits until the server is quiet (under 10 % of a core for a second, at most `maxMs`): its
 * background jobs have caught up with the last phase, so each phase starts from the same state.
 * Without it a phase ran beside the jobs and merges of the one before (they depend on how long
 * the next phase's requests took to build), and the ratio of one round ranged 0.47–1.28.
 */
async function settle(pid: number | undefined, maxMs: number): Promise<number> {
  const started = Date.now();
  if (pid === undefined) return 0;
  for (;;) {
    const a = cpuSeconds(pid);
    await new Promise((r) => setTimeout(r, 1000));
    const b = cpuSeconds(pid);
    if (a === undefined || b === undefined || b - a < 0.1 || Date.now() - started > maxMs) return Date.now() - started;
  }
}

/** Sends N calls in requests of PER calls from CLIENTS clients; tool calls per second. */
async function phase(server: ServeProcess, heavy: boolean): Promise<number> {
  const url = server.url;
  const t0 = Date.now() - 3_600_000;
  const bodies: Uint8Array[] = [];
  for (let i = 0; i < N; i += PER) {
    const spans = [];
    for (let j = i; j < Math.min(N, i + PER); j++) spans.push(...callSpans(j, heavy, t0));
    bodies.push(encodeProtobufTraces(JSON.stringify({ resourceSpans: [{ resource: { attributes: [str('service.name', 'bench-agent')] }, scopeSpans: [{ scope: { name: 'bench' }, spans }] }] })));
  }
  const quiet = await settle(server.pid, SETTLE_MS);
  if (quiet > SETTLE_MS) log(`  (the server was still busy after ${SETTLE_MS} ms; measuring anyway)`);
  let next = 0;
  const cpuBefore = server.pid === undefined ? undefined : cpuSeconds(server.pid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++] as Uint8Array;
        const res = await fetch(`${url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body });
        const text = await res.text();
        // A partial success (some span rejected) carries a message: none is expected here.
        if (!res.ok || text.length > 0) throw new Error(`POST /v1/traces ${res.status}: ${text.slice(0, 300)}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = server.pid === undefined ? undefined : cpuSeconds(server.pid);
  if (cpuBefore !== undefined && cpuAfter !== undefined) log(`  ${heavy ? 'trace-heavy' : 'tool spans only'}: ${seconds.toFixed(1)} s, server CPU ${((cpuAfter - cpuBefore) / N * 1e6).toFixed(0)} µs per tool call`);
  return N / seconds;
}

let server: ServeProcess | undefined;
runBench(
  async () => {
    // The audit log's builder logs calls a second after they are stored instead of a minute: its
    // work for a phase is then part of that phase and its settling, not of the next phase.
    server = opt.url ? { url: opt.url, stop: async () => undefined } : await startServe({ env: { AUDIT_LOG_GRACE_MS: '1000' } });
    log(`bench:otlp — ${N} tool calls per workload, ${PER} per request, ${CLIENTS} clients, ${WARMUP} warm-up + ${ROUNDS} rounds`);
    const rounds: Array<{ toolOnly: number; heavy: number; ratio: number }> = [];
    for (let r = -WARMUP; r < ROUNDS; r++) {
      // Odd rounds run the heavy workload first: the background jobs catching up on one phase's
      // calls run during the next, so each workload follows the other as often.
      const run = async (heavy: boolean) => {
        if (opt.only === (heavy ? 'tool' : 'heavy')) return NaN;
        return phase(server!, heavy);
      };
      const heavyFirst = Math.abs(r % 2) === 1;
      const first = await run(heavyFirst);
      const second = await run(!heavyFirst);
      const [toolOnly, heavy] = heavyFirst ? [second, first] : [first, second];
      if (r >= 0) rounds.push({ toolOnly, heavy, ratio: heavy / toolOnly });
      log(`${r < 0 ? 'warm-up (not counted)' : `round ${r + 1}`}: tool spans only ${toolOnly.toFixed(0)} calls/s · trace-heavy (10 spans per call) ${heavy.toFixed(0)} calls/s · ratio ${(heavy / toolOnly).toFixed(2)} (target ≥ 0.8)`);
    }
    const mid = median(rounds.map((x) => x.ratio));
    log(`median ratio of ${rounds.length} rounds: ${mid.toFixed(2)} (target ≥ 0.8)`);
    if (opt.json) writeFileSync(opt.json, JSON.stringify({ n: N, perRequest: PER, clients: CLIENTS, warmup: WARMUP, rounds, median: mid }, null, 2));
  },
  () => void server?.stop(),
  log,
);
