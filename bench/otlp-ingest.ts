/**
 * `npm run bench:otlp`: what the rest of a trace costs POST /v1/traces, per tool call.
 *
 *   npm run bench:otlp -- [--tool-calls 20000] [--calls-per-request 100] [--clients 4] [--rounds 2] [--url URL] [--json FILE]
 *
 * `--only tool|heavy`: one workload alone (to profile it). `--url`: a `tool-audit serve` already running without API keys (to profile it, say) instead of one started here.
 * One `tool-audit serve` (embedded ClickHouse, fresh data directory, no Kafka) receives, from
 * `--clients` concurrent clients, OTLP/HTTP protobuf export requests (as the SDKs' exporters send them) of `--calls-per-request` tool calls
 * each, in two workloads of `--tool-calls` calls, alternated `--rounds` times in the same process:
 *
 *  - tool spans only: one `execute_tool` span per call (the call's args and result);
 *  - trace-heavy: ten spans per call as an instrumented agent exports them — the call's
 *    `execute_tool` span, its agent's `invoke_agent` span, four `chat` model turns (tokens, and
 *    the first asking for the call by its id) and four other spans (HTTP client, chain) that are
 *    ignored.
 *
 * It prints tool calls per second of each (the time from the first request to the last answer:
 * the route answers once the packets are stored) and the ratio heavy / tool-only.
 * **Target: ≥ 0.8.** Machines are noisy: compare the ratio of rounds run side by side.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { encodeProtobufTraces } from '../ingest/otlp/otlp-decode.ts';
import { startServe, type ServeProcess } from '../test/helpers/web.ts';
import { runBench } from './bench-process.ts';
import { pct } from './history-load.ts';

const { values: opt } = parseArgs({
  options: {
    'tool-calls': { type: 'string', default: '20000' },
    'calls-per-request': { type: 'string', default: '100' },
    clients: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '2' },
    url: { type: 'string' },
    only: { type: 'string', default: 'both' },
    json: { type: 'string' },
  },
});
const N = Number(opt['tool-calls']);
const PER = Number(opt['calls-per-request']);
const CLIENTS = Number(opt.clients);
const ROUNDS = Number(opt.rounds);
for (const [k, v] of Object.entries({ 'tool-calls': N, 'calls-per-request': PER, clients: CLIENTS, rounds: ROUNDS })) {
  if (!(Number.isInteger(v) && v >= 1)) throw new Error(`--${k} must be a whole number ≥ 1`);
}
const log = (s: string) => process.stderr.write(`${s}\n`);

type Attr = { key: string; value: { stringValue?: string; intValue?: string } };
const str = (key: string, v: string): Attr => ({ key, value: { stringValue: v } });
const int = (key: string, v: number): Attr => ({ key, value: { intValue: String(v) } });
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** The spans of one tool call: its execute_tool span, and in the heavy workload nine more. */
function callSpans(i: number, heavy: boolean, t0: number): object[] {
  const traceId = hex(16);
  const ns = (ms: number) => String(BigInt(t0 + i * 10 + ms) * 1_000_000n);
  const span = (name: string, startMs: number, endMs: number, attributes: Attr[], kind = 1) => ({ traceId, spanId: hex(8), name, kind, startTimeUnixNano: ns(startMs), endTimeUnixNano: ns(endMs), attributes });
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
    span('invoke_agent planner', 0, 9, [str('gen_ai.operation.name', 'invoke_agent'), str('gen_ai.agent.name', 'planner')]),
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

/** Sends N calls in requests of PER calls from CLIENTS clients; tool calls per second. */
async function phase(url: string, heavy: boolean): Promise<number> {
  const t0 = Date.now() - 3_600_000;
  const bodies: Uint8Array[] = [];
  for (let i = 0; i < N; i += PER) {
    const spans = [];
    for (let j = i; j < Math.min(N, i + PER); j++) spans.push(...callSpans(j, heavy, t0));
    bodies.push(encodeProtobufTraces(JSON.stringify({ resourceSpans: [{ resource: { attributes: [str('service.name', 'bench-agent')] }, scopeSpans: [{ scope: { name: 'bench' }, spans }] }] })));
  }
  let next = 0;
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
  return N / ((performance.now() - started) / 1000);
}

let server: ServeProcess | undefined;
runBench(
  async () => {
    server = opt.url ? { url: opt.url, stop: async () => undefined } : await startServe();
    log(`bench:otlp — ${N} tool calls per workload, ${PER} per request, ${CLIENTS} clients, ${ROUNDS} rounds`);
    const rounds: Array<{ toolOnly: number; heavy: number; ratio: number }> = [];
    for (let r = 0; r < ROUNDS; r++) {
      // Odd rounds run the heavy workload first: the background jobs catching up on one phase's
      // calls run during the next, so each workload follows the other as often.
      const run = (heavy: boolean) => (opt.only === (heavy ? 'tool' : 'heavy') ? Promise.resolve(NaN) : phase(server!.url, heavy));
      const first = await run(r % 2 === 1);
      const second = await run(r % 2 === 0);
      const [toolOnly, heavy] = r % 2 === 1 ? [second, first] : [first, second];
      rounds.push({ toolOnly, heavy, ratio: heavy / toolOnly });
      log(`round ${r + 1}: tool spans only ${toolOnly.toFixed(0)} calls/s · trace-heavy (10 spans per call) ${heavy.toFixed(0)} calls/s · ratio ${(heavy / toolOnly).toFixed(2)} (target ≥ 0.8)`);
    }
    log(`median ratio of ${rounds.length} rounds: ${pct(rounds.map((x) => x.ratio), 0.5).toFixed(2)} (target ≥ 0.8)`);
    if (opt.json) writeFileSync(opt.json, JSON.stringify({ n: N, perRequest: PER, clients: CLIENTS, rounds }, null, 2));
  },
  () => void server?.stop(),
  log,
);
