/**
 * `npm run bench:mcp`: what the MCP audit gateway costs a call. The official TypeScript SDK
 * client calls a no-op tool of an SDK server (test/helpers/mcp-test-server.ts) directly and
 * through `tool-audit mcp`, rounds interleaved; the gateway delivers to a `tool-audit serve`
 * on embedded ClickHouse (HTTP ingest). Added latency = percentile through the gateway −
 * the same percentile direct. Throughput: calls in flight from one client through one gateway
 * process, and then the count stored, which must equal the calls made (every call audited).
 * Each figure is taken twice: delivering to `tool-audit serve` on this machine (its ClickHouse
 * ingest competes for the same cores), and to a stand-in sink in its own process that accepts
 * packets at once (bench/emit/mcp-null-sink.mjs: the gateway's own cost).
 *
 * With --pin the gateway enforces a pin of the server's tools (--pin-manifest): what failing
 * closed costs (over stdio a tools/list of its own at the first call; over HTTP one per call).
 *
 * With --redaction the gateway redacts secrets from every call before sending it (REDACTION_KEY set).
 *
 *   npm run bench:mcp [-- --calls 1000 --rounds 3 --throughput-calls 30000 --concurrency 32 --only stdio,http,throughput --pin --redaction --json FILE]
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { quantile } from '../stats.ts';
import { gatewayEnv, INGEST_KEY, randomPort, root, spawnListening, startServe, testServer, type Served } from '../../test/helpers/mcp.ts';

const { values: v } = parseArgs({ options: { calls: { type: 'string' }, rounds: { type: 'string' }, 'throughput-calls': { type: 'string' }, concurrency: { type: 'string' }, json: { type: 'string' }, only: { type: 'string' }, sink: { type: 'string' }, rate: { type: 'string' }, seconds: { type: 'string' }, pin: { type: 'boolean' }, redaction: { type: 'boolean' } } });
// --redaction: the gateway redacts secrets itself (REDACTION_KEY set), as an agent host would run it.
const REDACT: Record<string, string> = v.redaction ? { REDACTION_KEY: 'bench-redaction-key-0123456789' } : {};
const RATE = Number(v.rate ?? 3000);
const SECONDS = Number(v.seconds ?? 10);
const ONLY = new Set((v.only ?? 'stdio,http,throughput').split(','));
const CALLS = Number(v.calls ?? 1000);
const ROUNDS = Number(v.rounds ?? 3);
const THROUGHPUT_CALLS = Number(v['throughput-calls'] ?? 30_000);
const CONCURRENCY = Number(v.concurrency ?? 32);
const WARMUP = 200;

/** --pin-manifest FILE when --pin is given (filled in main from the server's own tools/list). */
const PIN: string[] = [];
const gateway = (flags: string[]) => [process.execPath, join(root, 'bin/tool-audit.mjs'), 'mcp', ...PIN, ...flags];

async function client(transport: Transport): Promise<Client> {
  const c = new Client({ name: 'bench-client', version: '1.0.0' });
  await c.connect(transport);
  return c;
}

/** Where the gateway delivers, and how many tool_calls of a tool arrived there. */
interface Sink {
  name: string;
  env: Record<string, string>;
  count(toolId: string): Promise<number>;
}

function serveSink(served: Served): Sink {
  return { name: 'tool-audit serve (embedded ClickHouse, same machine)', env: gatewayEnv(served, REDACT), count: (toolId) => storedCalls(served, toolId) };
}

async function nullSink(served: Served): Promise<Sink & { stop(): Promise<void> }> {
  const port = randomPort();
  const p = await spawnListening([process.execPath, join(root, 'bench/emit/mcp-null-sink.mjs'), String(port)], port);
  const url = `http://127.0.0.1:${port}`;
  return {
    name: 'stand-in sink (accepts at once)',
    env: { ...gatewayEnv(served, REDACT), TOOL_AUDIT_URL: url },
    count: async (toolId) => ((await (await fetch(`${url}/count?tool_id=${encodeURIComponent(toolId)}`)).json()) as { tool_calls: number }).tool_calls,
    stop: () => p.stop(),
  };
}

function stdioTransport(sink: Sink, via: boolean, server: string): StdioClientTransport {
  const [command, ...args] = via ? [...gateway(['--server', server, '--task-id', `bench-${server}`]), '--', ...testServer('stdio')] : testServer('stdio');
  return new StdioClientTransport({ command: command as string, args, env: sink.env, stderr: 'inherit' });
}

/** Per-call round trips (ms) of `calls` sequential no-op calls, after a warm-up. */
async function sequential(c: Client, calls: number): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await c.callTool({ name: 'noop', arguments: { n: i } });
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    await c.callTool({ name: 'noop', arguments: { n: i } });
    times.push(performance.now() - t0);
  }
  return times;
}

/**
 * calls/s of `total` calls with `concurrency` in flight; with `rate`, call n is not issued
 * before n / rate seconds (a paced offer, as agents call, rather than a burst).
 */
async function throughput(c: Client, total: number, concurrency: number, rate?: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const n = next++;
        const due = rate ? t0 + (n / rate) * 1000 - performance.now() : 0;
        if (due > 1) await new Promise((r) => setTimeout(r, due));
        await c.callTool({ name: 'noop', arguments: { n } });
      }
    }),
  );
  return total / ((performance.now() - t0) / 1000);
}

async function storedCalls(served: Served, toolId: string): Promise<number> {
  const res = await fetch(`${served.url}/v1/tools?limit=1000`, { headers: { authorization: `Bearer ${INGEST_KEY}` } });
  const body = (await res.json()) as { tools?: Array<{ tool_id: string; invocations: number }> };
  return body.tools?.find((t) => t.tool_id === toolId)?.invocations ?? 0;
}

async function waitStored(sink: Sink, toolId: string, n: number): Promise<number> {
  const end = Date.now() + 120_000;
  let got = 0;
  while (Date.now() < end && (got = await sink.count(toolId)) < n) await new Promise((r) => setTimeout(r, 500));
  return got;
}

async function latency(sink: Sink, kind: 'stdio' | 'http'): Promise<{ direct: number[]; via: number[] }> {
  const direct: number[] = [];
  const via: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const through of [false, true]) {
      const server = `bench-lat-${kind}-${randomUUID().slice(0, 8)}`;
      let stop: (() => Promise<void>) | undefined;
      let transport: Transport;
      if (kind === 'stdio') transport = stdioTransport(sink, through, server);
      else {
        const up = randomPort();
        const upstream = await spawnListening(testServer('http', up), up);
        let port = up;
        let gw: Awaited<ReturnType<typeof spawnListening>> | undefined;
        if (through) {
          port = randomPort();
          gw = await spawnListening([...gateway(['--server', server, '--upstream', `http://127.0.0.1:${up}/mcp`, '--listen', String(port)])], port, sink.env);
        }
        stop = async () => {
          await gw?.stop();
          await upstream.stop();
        };
        transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
      }
      const c = await client(transport);
      (through ? via : direct).push(...(await sequential(c, CALLS)));
      await c.close();
      await stop?.();
    }
  }
  return { direct, via };
}

async function measure(sink: Sink, key: string, report: Record<string, unknown>): Promise<void> {
  console.log(`— delivering to ${sink.name}`);
  for (const kind of ['stdio', 'http'] as const) {
    if (!ONLY.has(kind)) continue;
    const { direct, via } = await latency(sink, kind);
    const row = (p: number) => ({ direct: quantile(direct, p / 100), via: quantile(via, p / 100), added: quantile(via, p / 100) - quantile(direct, p / 100) });
    report[`${key}_${kind}_latency_ms`] = { p50: row(50), p99: row(99), n: via.length };
    console.log(`${kind} latency (ms, n=${via.length} per side): p50 direct ${row(50).direct.toFixed(3)} via ${row(50).via.toFixed(3)} added ${row(50).added.toFixed(3)}; p99 direct ${row(99).direct.toFixed(3)} via ${row(99).via.toFixed(3)} added ${row(99).added.toFixed(3)}`);
  }
  if (!ONLY.has('throughput')) return;
  const runs: Array<{ label: string; through: boolean; total: number; rate?: number }> = [
    { label: 'direct, unpaced', through: false, total: THROUGHPUT_CALLS },
    { label: 'through the gateway, unpaced', through: true, total: THROUGHPUT_CALLS },
    { label: `through the gateway, paced at ${RATE}/s for ${SECONDS} s`, through: true, total: RATE * SECONDS, rate: RATE },
  ];
  for (const run of runs) {
    const server = `bench-tp-${randomUUID().slice(0, 8)}`;
    const c = await client(stdioTransport(sink, run.through, server));
    const rate = await throughput(c, run.total, CONCURRENCY, run.rate);
    await c.close();
    const stored = run.through ? await waitStored(sink, `${server}/noop`, run.total) : null;
    report[`${key}_stdio_throughput_${run.label.replace(/\W+/g, '_')}`] = { calls: run.total, calls_per_s: rate, delivered: stored };
    console.log(`stdio throughput ${run.label}: ${rate.toFixed(0)} calls/s (${run.total} calls, ${CONCURRENCY} in flight)${run.through ? `; delivered ${stored} of ${run.total}` : ''}`);
  }
}

/** Writes the test server's tools/list, read directly, as the pin file. */
async function pinFile(): Promise<string> {
  const [command, ...args] = testServer('stdio');
  const c = await client(new StdioClientTransport({ command: command as string, args, stderr: 'inherit' }));
  const { tools } = await c.listTools();
  await c.close();
  const file = join(mkdtempSync(join(tmpdir(), 'bench-mcp-pin-')), 'pin.json');
  writeFileSync(file, JSON.stringify({ tools }));
  return file;
}

async function main(): Promise<void> {
  if (v.pin) PIN.push('--pin-manifest', await pinFile());
  const served = await startServe();
  const report: Record<string, unknown> = { pinned: Boolean(v.pin), calls_per_round: CALLS, rounds: ROUNDS, throughput_calls: THROUGHPUT_CALLS, concurrency: CONCURRENCY, node: process.version };
  const sinks = (v.sink ?? 'serve,null').split(',');
  try {
    if (sinks.includes('serve')) await measure(serveSink(served), 'serve', report);
    if (sinks.includes('null')) {
      const sink = await nullSink(served);
      await measure(sink, 'null', report).finally(() => sink.stop());
    }
  } finally {
    await served.stop();
  }
  if (v.json) writeFileSync(v.json, JSON.stringify(report, null, 2));
}

await main();
