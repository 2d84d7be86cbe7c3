/**
 * `npm run bench:mcp`: what the MCP audit gateway costs a call. The official TypeScript SDK
 * client calls a no-op tool of an SDK server (test/helpers/mcp-test-server.ts) directly and
 * through `tool-audit mcp`, rounds interleaved; the gateway delivers to a `tool-audit serve`
 * on embedded ClickHouse (HTTP ingest). Added latency = percentile through the gateway −
 * the same percentile direct. Throughput: calls in flight from one client through one gateway
 * process, and then the count stored, which must equal the calls made (every call audited).
 *
 *   npm run bench:mcp [-- --calls 1000 --rounds 5 --throughput-calls 30000 --concurrency 32 --json FILE]
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { gatewayEnv, INGEST_KEY, randomPort, root, spawnListening, startServe, testServer, type Served } from '../test/helpers/mcp.ts';

const { values: v } = parseArgs({ options: { calls: { type: 'string' }, rounds: { type: 'string' }, 'throughput-calls': { type: 'string' }, concurrency: { type: 'string' }, json: { type: 'string' } } });
const CALLS = Number(v.calls ?? 1000);
const ROUNDS = Number(v.rounds ?? 5);
const THROUGHPUT_CALLS = Number(v['throughput-calls'] ?? 30_000);
const CONCURRENCY = Number(v.concurrency ?? 32);
const WARMUP = 200;

const gateway = (flags: string[]) => [process.execPath, join(root, 'bin/tool-audit.mjs'), 'mcp', ...flags];

async function client(transport: Transport): Promise<Client> {
  const c = new Client({ name: 'bench-client', version: '1.0.0' });
  await c.connect(transport);
  return c;
}

function stdioTransport(served: Served, via: boolean, server: string): StdioClientTransport {
  const [command, ...args] = via ? [...gateway(['--server', server, '--task-id', `bench-${server}`]), '--', ...testServer('stdio')] : testServer('stdio');
  return new StdioClientTransport({ command: command as string, args, env: gatewayEnv(served), stderr: 'inherit' });
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

/** calls/s of `total` calls with `concurrency` in flight. */
async function throughput(c: Client, total: number, concurrency: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const n = next++;
        await c.callTool({ name: 'noop', arguments: { n } });
      }
    }),
  );
  return total / ((performance.now() - t0) / 1000);
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
}

async function storedCalls(served: Served, toolId: string): Promise<number> {
  const res = await fetch(`${served.url}/v1/tools?limit=1000`, { headers: { authorization: `Bearer ${INGEST_KEY}` } });
  const body = (await res.json()) as { tools?: Array<{ tool_id: string; invocations: number }> };
  return body.tools?.find((t) => t.tool_id === toolId)?.invocations ?? 0;
}

async function waitStored(served: Served, toolId: string, n: number): Promise<number> {
  const end = Date.now() + 120_000;
  let got = 0;
  while (Date.now() < end && (got = await storedCalls(served, toolId)) < n) await new Promise((r) => setTimeout(r, 500));
  return got;
}

async function latency(served: Served, kind: 'stdio' | 'http'): Promise<{ direct: number[]; via: number[] }> {
  const direct: number[] = [];
  const via: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const through of [false, true]) {
      const server = `bench-lat-${kind}-${randomUUID().slice(0, 8)}`;
      let stop: (() => Promise<void>) | undefined;
      let transport: Transport;
      if (kind === 'stdio') transport = stdioTransport(served, through, server);
      else {
        const up = randomPort();
        const upstream = await spawnListening(testServer('http', up), up);
        let port = up;
        let gw: Awaited<ReturnType<typeof spawnListening>> | undefined;
        if (through) {
          port = randomPort();
          gw = await spawnListening([...gateway(['--server', server, '--upstream', `http://127.0.0.1:${up}/mcp`, '--listen', String(port)])], port, gatewayEnv(served));
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

async function main(): Promise<void> {
  const served = await startServe();
  const report: Record<string, unknown> = { calls_per_round: CALLS, rounds: ROUNDS, throughput_calls: THROUGHPUT_CALLS, concurrency: CONCURRENCY, node: process.version };
  try {
    for (const kind of ['stdio', 'http'] as const) {
      const { direct, via } = await latency(served, kind);
      const row = (p: number) => ({ direct: pct(direct, p), via: pct(via, p), added: pct(via, p) - pct(direct, p) });
      report[`${kind}_latency_ms`] = { p50: row(50), p99: row(99), n: via.length };
      console.log(`${kind} latency (ms, n=${via.length} per side): p50 direct ${row(50).direct.toFixed(3)} via ${row(50).via.toFixed(3)} added ${row(50).added.toFixed(3)}; p99 direct ${row(99).direct.toFixed(3)} via ${row(99).via.toFixed(3)} added ${row(99).added.toFixed(3)}`);
    }
    for (const through of [false, true]) {
      const server = `bench-tp-${randomUUID().slice(0, 8)}`;
      const c = await client(stdioTransport(served, through, server));
      const rate = await throughput(c, THROUGHPUT_CALLS, CONCURRENCY);
      await c.close();
      const stored = through ? await waitStored(served, `${server}/noop`, THROUGHPUT_CALLS) : null;
      report[through ? 'stdio_throughput_via' : 'stdio_throughput_direct'] = { calls_per_s: rate, stored };
      console.log(`stdio throughput ${through ? 'through the gateway' : 'direct'}: ${rate.toFixed(0)} calls/s (${THROUGHPUT_CALLS} calls, ${CONCURRENCY} in flight)${through ? `; stored ${stored} of ${THROUGHPUT_CALLS}` : ''}`);
    }
  } finally {
    await served.stop();
  }
  if (v.json) writeFileSync(v.json, JSON.stringify(report, null, 2));
}

await main();
