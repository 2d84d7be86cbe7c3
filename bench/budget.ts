/**
 * `npm run bench:budget`: budget check latency over HTTP and the emitter's added latency.
 *
 * Starts `tool-audit serve` as its own process (embedded ClickHouse in a temporary directory),
 * puts 100 budgets in force and a month of spend behind them, then from this process:
 *  1. fires POST /v1/budget/check open-loop at RATE checks/s for SECONDS (keep-alive sockets;
 *     every other check carries a call_id and reserves), reporting p50/p99/max of each answer;
 *  2. wraps a no-op tool with the emitter N times in sequence, without and with the budget
 *     option, and reports the added latency per wrapped call.
 * Env: RATE (1000), SECONDS (10), N (2000).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuditEmitter, createMemoryTransport } from '../emit/index.ts';

const RATE = Number(process.env.RATE ?? 1000);
const SECONDS = Number(process.env.SECONDS ?? 10);
const N = Number(process.env.N ?? 2000);
const ADMIN = 'admin-key-0123456789a';
const INGEST = 'ingest-key-0123456789';
const root = new URL('../', import.meta.url).pathname;
const AGENTS = Array.from({ length: 10 }, (_, i) => `agent-${i}`);
const TOOLS = Array.from({ length: 10 }, (_, i) => `tool-${i}`);

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] as number;
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
  const now = Date.now();
  const monthStart = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1);
  const audit = createAuditEmitter({ orchestrator: 'kernel', agentId: 'seed', http: { url, apiKey: INGEST } });
  for (let i = 0; i < calls; i++) {
    void audit.invoke(TOOLS[i % 10] as string, { i }, () => ({ ok: true }), { agentId: AGENTS[(i * 7) % 10] as string, taskId: `task-${i % 500}` });
  }
  await audit.close(60_000);
  void monthStart;
}

/** Open-loop checks: RATE per second, spread over 10 ms ticks, each timed to its last byte. */
async function loadChecks(url: string): Promise<{ lat: number[]; errors: number; seconds: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const { hostname, port } = new URL(url);
  const lat: number[] = [];
  let errors = 0;
  let sent = 0;
  const check = (i: number) =>
    new Promise<void>((resolve) => {
      const body = JSON.stringify({ agent_id: AGENTS[i % 10], tool_id: TOOLS[(i * 3) % 10], task_id: `task-${i % 500}`, projected_cost_usd: 0.001, ...(i % 2 ? { call_id: randomUUID() } : {}) });
      const t0 = performance.now();
      const req = request({ hostname, port, path: '/v1/budget/check', method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: `Bearer ${INGEST}` } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) lat.push(performance.now() - t0);
          else errors++;
          resolve();
        });
      });
      req.on('error', () => (errors++, resolve()));
      req.end(body);
    });
  const inflight: Array<Promise<void>> = [];
  const started = performance.now();
  const total = RATE * SECONDS;
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      // Catch up to the schedule: the rate holds even when a tick runs late.
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * RATE));
      while (sent < due) inflight.push(check(sent++));
      if (sent >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 5);
  });
  await Promise.all(inflight);
  agent.destroy();
  return { lat: lat.sort((a, b) => a - b), errors, seconds: (performance.now() - started) / 1000 };
}

/** Mean and percentiles of a wrapped no-op call, without and with the budget option. */
async function emitterOverhead(url: string): Promise<void> {
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
  console.log(`emitter, ${N} sequential wrapped no-op calls (last 90%): without budget p50 ${ms(pct(off.xs, 50))} ms, p99 ${ms(pct(off.xs, 99))} ms; with budget p50 ${ms(pct(on.xs, 50))} ms, p99 ${ms(pct(on.xs, 99))} ms`);
  console.log(`  added per call: mean ${ms(mean(on.xs) - mean(off.xs))} ms, p50 ${ms(pct(on.xs, 50) - pct(off.xs, 50))} ms, p99 ${ms(pct(on.xs, 99) - pct(off.xs, 99))} ms; budget stats ${JSON.stringify(on.stats.budget)}`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tool-audit-bench-budget-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const url = `http://127.0.0.1:${port}`;
  const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), TOOL_AUDIT_DATA_DIR: dir, LOG_LEVEL: 'warn', TOOL_AUDIT_API_KEYS: `${ADMIN}:admin;${INGEST}:ingest,read`, ANALYZER_ENABLED: 'false', DEDUP_INDEX_INTERVAL_MS: '0', RATE_LIMIT_PER_MINUTE: '0' };
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
    const r = await loadChecks(url);
    console.log(
      `budget checks over HTTP: ${r.lat.length} answered in ${r.seconds.toFixed(1)} s (${(r.lat.length / r.seconds).toFixed(0)}/s, target ${RATE}/s), 100 budgets, ${r.errors} errors: p50 ${ms(pct(r.lat, 50))} ms, p99 ${ms(pct(r.lat, 99))} ms, max ${ms(r.lat[r.lat.length - 1] ?? NaN)} ms`,
    );
    // The server's own view (fastify's elapsed time per request, last window of samples): what
    // the handler costs, apart from the client and the network stack on a shared machine.
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const server = metrics.split('\n').filter((l) => l.startsWith('tool_audit_http_request_seconds{') && l.includes('/v1/budget/check') && l.includes('quantile'));
    console.log(`  server side: ${server.map((l) => `${/quantile="([\d.]+)"/.exec(l)?.[1]} ${ms(Number(l.split(' ').at(-1)) * 1000)} ms`).join(', ')}`);
    await emitterOverhead(url);
    console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
