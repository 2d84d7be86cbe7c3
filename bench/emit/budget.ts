/**
 * `npm run bench:budget`: budget check latency over HTTP and the emitter's added latency.
 *
 * Starts `tool-audit serve` as its own process (embedded ClickHouse in a temporary directory,
 * BUDGET_CHECK_PORT set), puts 100 budgets in force and a month of spend behind them, then:
 *  1. fires POST /v1/budget/check open-loop at RATE checks/s for SECONDS from a load generator
 *     process of its own (bench/emit/budget-load.mjs; every other check carries a call_id and
 *     reserves), at the dedicated check port and at the main port, ROUNDS times each, in turn,
 *     reporting p50/p99/p99.9/max of each answer;
 *  2. wraps a no-op tool with the emitter N times in sequence, without and with the budget
 *     option (against each port), and reports the added latency per wrapped call.
 * Env: RATE (1000), SECONDS (10), ROUNDS (2), N (2000).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createAuditEmitter, createMemoryTransport } from '../../emit/index.ts';
import { quantile } from '../stats.ts';

const RATE = Number(process.env.RATE ?? 1000);
const SECONDS = Number(process.env.SECONDS ?? 10);
const N = Number(process.env.N ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const ADMIN = 'admin-key-0123456789a';
const INGEST = 'ingest-key-0123456789';
const root = new URL('../../', import.meta.url).pathname;
const AGENTS = Array.from({ length: 10 }, (_, i) => `agent-${i}`);
const TOOLS = Array.from({ length: 10 }, (_, i) => `tool-${i}`);

const pct = (xs: number[], p: number) => quantile(xs, p / 100);
const ms = (x: number) => x.toFixed(2);

/** 100 budgets: per agent (day), per tool (month), per agent×tool pair, most warn, some deny. */
function budgets() {
  const out: object[] = [];
  AGENTS.forEach((a) => out.push({ budget_id: `agent-${a}`, scope: { agent_id: a }, period: 'day', limit_usd: 1e6, mode: 'deny' }));
  TOOLS.forEach((t) => out.push({ budget_id: `tool-${t}`, scope: { tool_id: t }, period: 'month', limit_usd: 1e6, mode: 'warn' }));
  for (let i = 0; out.length < 100; i++) out.push({ budget_id: `pair-${i}`, scope: { agent_id: AGENTS[i % 10], tool_id: TOOLS[(i * 3) % 10] }, period: 'day', limit_usd: 1e6, mode: i % 2 ? 'warn' : 'deny' });
  return out;
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not come up`);
}

/** Seeds spend: calls over the month so far, through POST /v1/packets (the writer feeds the ledger). */
async function seed(url: string, calls: number): Promise<void> {
  const audit = createAuditEmitter({ orchestrator: 'kernel', agentId: 'seed', http: { url, apiKey: INGEST } });
  for (let i = 0; i < calls; i++) {
    void audit.invoke(TOOLS[i % 10] as string, { i }, () => ({ ok: true }), { agentId: AGENTS[(i * 7) % 10] as string, taskId: `task-${i % 500}` });
  }
  await audit.close(60_000);
}

interface LoadResult {
  ok: number;
  errors: number;
  seconds: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

/** Open-loop checks at RATE/s for SECONDS from the load generator process. */
async function loadChecks(url: string): Promise<LoadResult> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'bench/emit/budget-load.mjs'), `${url}/v1/budget/check`, String(RATE), String(SECONDS), INGEST]);
  return JSON.parse(stdout) as LoadResult;
}

/** Mean and percentiles of a wrapped no-op call, without and with the budget option. */
async function emitterOverhead(url: string, label: string): Promise<void> {
  const runs = async (budget: boolean) => {
    const audit = createAuditEmitter({ orchestrator: 'kernel', agentId: AGENTS[0] as string, transport: createMemoryTransport(), ...(budget ? { budget: { projectedCostUsd: 0.001, onUnavailable: 'allow' as const, url, apiKey: INGEST } } : {}) });
    const xs: number[] = [];
    for (let i = 0; i < N; i++) {
      const t0 = performance.now();
      await audit.invoke(TOOLS[1] as string, { i }, () => i);
      xs.push(performance.now() - t0);
    }
    const stats = audit.stats();
    await audit.close();
    return { xs: xs.slice(N / 10).sort((a, b) => a - b), stats };
  };
  await runs(true); // warm the connection and the JIT
  const off = await runs(false);
  const on = await runs(true);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`emitter → ${label}, ${N} sequential wrapped no-op calls (last 90%): without budget p50 ${ms(pct(off.xs, 50))} ms, p99 ${ms(pct(off.xs, 99))} ms; with budget p50 ${ms(pct(on.xs, 50))} ms, p99 ${ms(pct(on.xs, 99))} ms`);
  console.log(`  added per call: mean ${ms(mean(on.xs) - mean(off.xs))} ms, p50 ${ms(pct(on.xs, 50) - pct(off.xs, 50))} ms, p99 ${ms(pct(on.xs, 99) - pct(off.xs, 99))} ms; budget stats ${JSON.stringify(on.stats.budget)}`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tool-audit-bench-budget-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const checkPort = port + 1;
  const url = `http://127.0.0.1:${port}`;
  const checkUrl = `http://127.0.0.1:${checkPort}`;
  const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), TOOL_AUDIT_DATA_DIR: dir, LOG_LEVEL: 'warn', TOOL_AUDIT_API_KEYS: `${ADMIN}:admin;${INGEST}:ingest,read`, ANALYZER_ENABLED: 'false', DEDUP_INDEX_INTERVAL_MS: '0', RATE_LIMIT_PER_MINUTE: '0', BUDGET_CHECK_PORT: String(checkPort) };
  delete env.KAFKA_BROKERS;
  delete env.CLICKHOUSE_URL;
  const child = spawn(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'serve'], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((r) => child.on('exit', r));
  try {
    await waitFor(`${url}/readyz`);
    const put = await fetch(`${url}/v1/budgets`, { method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` }, body: JSON.stringify(budgets()) });
    if (put.status !== 200) throw new Error(`PUT /v1/budgets → ${put.status} ${await put.text()}`);
    await seed(url, 20_000);
    console.log(`load average before: ${loadavg().map((x) => x.toFixed(2)).join(' ')} (2 cores, shared)`);
    const doors = [
      { label: `check port ${checkPort}`, url: checkUrl },
      { label: `main port ${port}`, url },
    ];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const door of doors) {
        const r = await loadChecks(door.url);
        console.log(
          `round ${round}, ${door.label}: ${r.ok} checks answered in ${r.seconds.toFixed(1)} s (${(r.ok / r.seconds).toFixed(0)}/s, target ${RATE}/s), 100 budgets, ${r.errors} errors: p50 ${ms(r.p50)} ms, p99 ${ms(r.p99)} ms, p99.9 ${ms(r.p999)} ms, max ${ms(r.max)} ms`,
        );
      }
    }
    // The server's own view of the main port (fastify's elapsed time per request, last window of
    // samples): what the handler costs there, apart from the client and the network stack.
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const server = metrics.split('\n').filter((l) => l.startsWith('tool_audit_http_request_seconds{') && l.includes('/v1/budget/check') && l.includes('quantile'));
    console.log(`  main port, server side: ${server.map((l) => `${/quantile="([\d.]+)"/.exec(l)?.[1]} ${ms(Number(l.split(' ').at(-1)) * 1000)} ms`).join(', ')}`);
    for (const door of doors) await emitterOverhead(door.url, door.label);
    console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
