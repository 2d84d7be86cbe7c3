/**
 * `npm run bench:queries`: the read API at 10 million invocations, and the cache
 * simulation and TTL curve over it under the bench manifest (bench-manifest.ts).
 *
 * Builds (or reuses) 10 M invocations over 100 000 tasks and 30 days in embedded ClickHouse under
 * ./.bench-data (bench/reads/queries-data.ts), starts the API in-process on a random loopback port, and
 * for every endpoint measures, in the same run and interleaved call by call, the HTTP answer time
 * (node:http, keep-alive, from a client thread) and the raw time of the same query function called straight on the client. Prints
 * p50/p95 of both and their ratio, and the targets of the issue.
 *
 *   npm run bench:queries [-- --invocations N --tasks N --days N --data-dir DIR --rounds K --only TEXT]
 *
 * --only runs the endpoints whose name contains TEXT (e.g. `--only task`).
 */
import { loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { buildApp } from '../../api/app.ts';
import { createClickHouse } from '../../platform/clickhouse/client.ts';
import { silentLogger } from '../../platform/logger.ts';
import { MetricsRegistry } from '../../platform/metrics.ts';
import { createReadQueries, type ReadQueries } from '../../queries/index.ts';
import type { TimeWindow } from '../../queries/sql.ts';
import { BENCH_SHAPE_OPTIONS, ensureBenchData } from './queries-data.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { removeReplacedParts } from '../../platform/clickhouse/part-cleanup.ts';
import { applyManifest, loadManifestHistory } from '../../analyzers/manifest-store.ts';
import { benchManifest } from '../jobs/bench-manifest.ts';
import { quantile } from '../stats.ts';

const { values: args } = parseArgs({
  options: {
    ...BENCH_SHAPE_OPTIONS,
    rounds: { type: 'string', default: '1' },
    only: { type: 'string', default: '' },
  },
});
const KEY = 'bench-read-key-0123456789';
const DB = 'bench';

interface Case {
  name: string;
  /** Measured calls (each once over HTTP and once raw), after 1–5 warm-up calls of each (n/10). */
  n: number;
  url(i: number): string;
  raw(q: ReadQueries, i: number): Promise<unknown>;
  target?: { p95ms: number; label: string };
}

function cases(w: TimeWindow, tools: string[], agents: string[], taskIds: string[]): Case[] {
  const win = `from=${new Date(w.fromMs).toISOString()}&to=${new Date(w.toMs).toISOString()}`;
  const all = { fromMs: 0, toMs: Date.UTC(2200, 0, 1) };
  const tool = (i: number) => tools[i % tools.length] as string;
  const task = (i: number) => taskIds[i % taskIds.length] as string;
  // The cacheable tools of the bench manifest, the busiest (search_web, fetch_url) among them.
  const cacheTools = ['search_web', 'fetch_url', 'sql_query', 'vector_search'];
  const cacheTool = (i: number) => cacheTools[i % cacheTools.length] as string;
  return [
    { name: 'task view  /v1/tasks/{id}', n: 200, url: (i) => `/v1/tasks/${task(i)}`, raw: (q, i) => q.task({ taskId: task(i), window: all, limit: 100 }), target: { p95ms: 50, label: 'p95 ≤ 50 ms' } },
    { name: 'tool stats 30 d  /v1/tools/{id}/stats', n: 36, url: (i) => `/v1/tools/${tool(i)}/stats?${win}`, raw: (q, i) => q.toolStats({ toolId: tool(i), window: w, limit: 100 }), target: { p95ms: 300, label: 'p95 ≤ 300 ms' } },
    { name: 'tool invocations  /v1/tools/{id}/invocations', n: 24, url: (i) => `/v1/tools/${tool(i)}/invocations?${win}`, raw: (q, i) => q.toolInvocations({ toolId: tool(i), window: w, limit: 100 }) },
    { name: 'tool outputs  /v1/tools/{id}/outputs', n: 12, url: (i) => `/v1/tools/${tool(i)}/outputs?${win}`, raw: (q, i) => q.toolOutputs({ toolId: tool(i), window: w, limit: 100 }) },
    { name: 'all tools (top)  /v1/tools', n: 6, url: () => `/v1/tools?${win}`, raw: (q) => q.tools({ window: w, limit: 100 }) },
    { name: 'agent  /v1/agents/{id}/tools', n: 16, url: (i) => `/v1/agents/${agents[i % agents.length]}/tools?${win}`, raw: (q, i) => q.agentTools({ agentId: agents[i % agents.length] as string, window: w, limit: 100 }) },
    { name: 'expensive  /v1/calls/expensive', n: 12, url: () => `/v1/calls/expensive?${win}`, raw: (q) => q.expensive({ thresholdUsd: 1, window: w, limit: 100 }) },
    { name: 'slow  /v1/calls/slow', n: 12, url: () => `/v1/calls/slow?${win}`, raw: (q) => q.slow({ thresholdMs: 30_000, window: w, limit: 100 }) },
    { name: 'failed  /v1/calls/failed', n: 12, url: () => `/v1/calls/failed?${win}`, raw: (q) => q.failed({ window: w, limit: 100 }) },
    { name: 'dedup 30 d  /v1/dedup/candidates', n: 10, url: () => `/v1/dedup/candidates?${win}`, raw: (q) => q.dedup({ minCount: 2, window: w, limit: 100 }), target: { p95ms: 1000, label: 'p95 ≤ 1 s' } },
    { name: 'identical outputs  /v1/outputs/identical', n: 6, url: () => `/v1/outputs/identical?${win}`, raw: (q) => q.identicalOutputs({ minCount: 2, window: w, limit: 100 }) },
    { name: 'sequences  /v1/workflows/sequences', n: 4, url: () => `/v1/workflows/sequences?${win}`, raw: (q) => q.sequences({ length: 3, minCount: 2, window: w, limit: 100 }) },
    { name: 'violations  /v1/violations', n: 24, url: () => `/v1/violations?${win}`, raw: (q) => q.violations({ window: w, limit: 100 }) },
    // Cache simulation over the whole 30 days, at the manifest's TTLs.
    { name: 'cache sim one tool  /v1/cache/simulation?tool_id=', n: 12, url: (i) => `/v1/cache/simulation?${win}&tool_id=${cacheTool(i)}`, raw: (q, i) => q.cacheSimulation({ window: w, toolId: cacheTool(i) }), target: { p95ms: 1000, label: 'p95 ≤ 1 s' } },
    { name: 'cache sim all tools  /v1/cache/simulation', n: 4, url: () => `/v1/cache/simulation?${win}`, raw: (q) => q.cacheSimulation({ window: w }), target: { p95ms: 5000, label: '≤ 5 s' } },
    { name: 'cache TTL curve one tool  /v1/cache/ttl-curve', n: 8, url: (i) => `/v1/cache/ttl-curve?${win}&tool_id=${cacheTool(i)}`, raw: (q, i) => q.ttlCurve({ window: w, toolId: cacheTool(i) }), target: { p95ms: 2000, label: 'p95 ≤ 2 s' } },
  ];
}

const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

async function main(): Promise<void> {
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const shape = { invocations: Number(args.invocations), tasks: Number(args.tasks), days: Number(args.days) };
  const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: DB, dataDir: args['data-dir'] as string });
  const t0 = Date.now();
  const data = await ensureBenchData(ch, DB, shape, log);
  log(`data ready in ${Math.round((Date.now() - t0) / 1000)} s: ${shape.invocations} invocations, ${shape.tasks} tasks, ${data.from} … ${data.to}`);
  const window = { fromMs: Date.parse(data.from), toMs: Date.parse(data.to) + 1 };
  const door = createClickHouseDoor(ch, DB);
  if (!(await loadManifestHistory(door, DB)).loaded) await applyManifest(door, benchManifest(), Date.parse(data.from));
  const queries = createReadQueries(createClickHouseDoor(ch, DB), DB, { limits: { maxExecutionSeconds: 120, maxResultRows: 100_000 }, expensiveThresholdUsd: 1 });
  const app = buildApp({
    readiness: async () => ({ ready: true, checks: {} }),
    metrics: new MetricsRegistry(),
    apiKeys: [{ key: KEY, scopes: ['read'] }],
    maxBodyBytes: 1 << 20,
    logger: silentLogger(),
    read: { queries, defaults: { windowDays: 90, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 }, rateLimit: { perMinute: 0, burst: 1 } },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  // The client runs on a thread of its own (bench/http-client-worker.mjs), as a real client runs
  // in another process: node:http over one keep-alive connection (Node's fetch adds ~3.5 ms of its
  // own per 100-KB answer), timed there from the request to the last byte.
  const client = new Worker(new URL('../http-client-worker.mjs', import.meta.url), { workerData: { base, key: KEY } });
  const pending = new Map<number, { resolve: (ms: number) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  client.on('message', (m: { id: number; ms?: number; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error !== undefined) p?.reject(new Error(m.error));
    else p?.resolve(m.ms as number);
  });
  const httpMs = (url: string) =>
    new Promise<number>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      client.postMessage({ id, url });
    });
  const timed = async (f: () => Promise<unknown>) => {
    const s = performance.now();
    await f();
    return performance.now() - s;
  };

  const load0 = loadavg()[0] as number;
  const rows: string[][] = [];
  const verdicts: string[] = [];
  for (const c of cases(window, data.tools, data.agents, data.taskIds).filter((x) => x.name.includes(args.only as string))) {
    const raw: number[] = [];
    const api: number[] = [];
    // Warm-up (not measured): the code paths of both ways compiled, connections open. More for
    // the fast endpoints, whose few milliseconds a cold path would distort most.
    for (let w = 0; w < Math.max(1, Math.min(5, Math.round(c.n / 10))); w++) {
      await c.raw(queries, 0);
      await httpMs(c.url(0));
    }
    for (let round = 0; round < Number(args.rounds); round++) {
      for (let i = 1; i <= c.n; i++) {
        // Interleaved, alternating which goes first, so both see the same machine load.
        if (i % 2) {
          raw.push(await timed(() => c.raw(queries, i)));
          api.push(await httpMs(c.url(i)));
        } else {
          api.push(await httpMs(c.url(i)));
          raw.push(await timed(() => c.raw(queries, i)));
        }
      }
    }
    const [r50, r95, a50, a95] = [quantile(raw, 0.5), quantile(raw, 0.95), quantile(api, 0.5), quantile(api, 0.95)];
    // Each HTTP call and its raw twin ran back to back: the median of their ratios is the
    // overhead least disturbed by what else the machine was doing at the time.
    const paired = quantile(api.map((a, i) => a / (raw[i] as number)), 0.5);
    const targetMet = c.target ? a95 <= c.target.p95ms : undefined;
    rows.push([c.name, String(raw.length), fmt(r50), fmt(r95), fmt(a50), fmt(a95), (a50 / r50).toFixed(2), (a95 / r95).toFixed(2), paired.toFixed(2), c.target ? `${c.target.label}: ${targetMet ? 'met' : 'MISSED'}` : '']);
    if (c.target) verdicts.push(`${c.name}: API p95 ${fmt(a95)} ms, target ${c.target.label} → ${targetMet ? 'met' : 'MISSED'}`);
    verdicts.push(`${c.name}: API/raw ${paired.toFixed(2)} (median of paired calls) → ${paired <= 1.3 ? 'met' : 'MISSED'}`);
    log(`  ${c.name}: done`);
  }
  await client.terminate();
  await app.close();
  // The cached database keeps active parts only: the build's merges replaced most of its parts.
  await removeReplacedParts(door);
  await ch.close();

  const head = ['endpoint', 'n', 'raw p50 ms', 'raw p95 ms', 'API p50 ms', 'API p95 ms', 'API/raw p50', 'API/raw p95', 'API/raw paired', 'target'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (r: string[]) => `| ${r.map((x, i) => (i === 0 || i === 9 ? x.padEnd(widths[i] as number) : x.padStart(widths[i] as number))).join(' | ')} |`;
  const out = [
    `bench:queries — ${shape.invocations.toLocaleString('en')} invocations, ${shape.tasks.toLocaleString('en')} tasks, ${shape.days} days (embedded ClickHouse, ${args['data-dir']}); load average ${load0.toFixed(2)} → ${(loadavg()[0] as number).toFixed(2)}`,
    line(head),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.map(line),
    '',
    ...verdicts.filter((v) => !v.includes('API/raw') || v.endsWith('MISSED')),
    verdicts.filter((v) => v.includes('API/raw')).every((v) => v.includes('→ met'))
      ? 'API ≤ 1.3× raw SQL (median of paired calls): met for every endpoint'
      : 'API ≤ 1.3× raw SQL (median of paired calls): MISSED for the endpoints above',
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:queries failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
