/**
 * npm run bench:analyzer — dependency analyzer throughput and lag, on embedded ClickHouse.
 *
 * 1. Backlog: N packets (tasks of 20 calls spread over 10 minutes) are written through the
 *    real ingest pipeline, then one analyzer cycle links them: pairs/s and packets/s.
 * 2. Lag under load: packets are written as fast as the pipeline takes them (the ingest rate)
 *    while the analyzer runs every ANALYZER_INTERVAL_MS; its lag gauge is sampled each cycle.
 *
 * Usage: npm run bench:analyzer [-- packets]   (default 200000)
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDependencyAnalyzer } from '../../analyzers/dependency-runner.ts';
import { createClickHouse } from '../../platform/clickhouse/client.ts';
import { migrate } from '../../platform/clickhouse/migrate.ts';
import { createSegmentWriter } from '../../ingest/segment-writer.ts';
import { silentLogger } from '../../platform/logger.ts';
import { MetricsRegistry } from '../../platform/metrics.ts';
import { canonicalArgs } from '../../schemas/canonical-json.ts';
import { sha256Hex } from '../../schemas/hashing.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { lagText, lagUnderLoad } from '../ingest/lag-under-load.ts';

const N = Number(process.argv[2] ?? 200_000);
const CALLS_PER_TASK = 20;
const BATCH = 5000;
const TOOLS = ['search_web', 'fetch_url', 'python_execute', 'create_chart', 'sql_query', 'finance_quote'];

function packets(count: number, startMs: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const task = `bench-${Math.floor(i / CALLS_PER_TASK)}-${startMs}`;
    const args = { q: `query ${i}`, page: i % 3 };
    const call_id = randomUUID();
    const invocation = {
      call_id, task_id: task, tool_id: TOOLS[i % TOOLS.length], agent_id: 'L', orchestrator: 'kernel', args,
      args_hash: sha256Hex(canonicalArgs(args)), status: 'success', duration_ms: 100 + (i % 900), result_summary: { n: i % 7 },
      error: null, cost_usd: 0.001, tokens_used: null,
      // 20 calls of a task spread over 10 minutes: about 3 in any 60 s window, some parallel.
      created_at: new Date(startMs + (i % CALLS_PER_TASK) * 30_000 + (i % 2) * 5).toISOString(),
    };
    out.push(JSON.stringify({ type: 'tool_call', call_id, invocation }));
  }
  return out;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tool-audit-bench-analyzer-'));
  const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: 'bench', dataDir: dir });
  const db = 'bench_analyzer';
  await migrate(createClickHouseDoor(ch, db), { retentionDays: { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 } });
  const metrics = new MetricsRegistry();
  const writer = createSegmentWriter({ clickhouse: createClickHouseDoor(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics, logger: silentLogger() });
  const analyzer = createDependencyAnalyzer({ clickhouse: createClickHouseDoor(ch, db), windowMs: 60_000, overlapMs: 30_000, metrics, logger: silentLogger() });
  const write = async (raws: string[]) => {
    for (let i = 0; i < raws.length; i += BATCH) {
      await writer.write(raws.slice(i, i + BATCH).map((raw, k) => ({ raw, source: { kind: 'http', requestId: `b${i}`, index: k } })));
    }
  };

  // 1. Backlog.
  const t0 = performance.now();
  await write(packets(N, Date.UTC(2026, 10, 1)));
  const ingestS = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  const r = await analyzer.runOnce();
  const analyzeS = (performance.now() - t1) / 1000;

  // 2. Lag while ingest runs at full speed.
  const { loadS, cycles, lags, drainS } = await lagUnderLoad(
    () => write(packets(N, Date.UTC(2026, 10, 2))),
    async () => {
      await analyzer.runOnce();
      return metrics.value('tool_audit_analyzer_lag_seconds');
    },
  );

  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  console.log(`bench:analyzer — ${fmt(N)} packets, ${CALLS_PER_TASK} calls/task, embedded ClickHouse, 2 cores`);
  console.log('| phase | figure |');
  console.log('|---|---|');
  console.log(`| ingest pipeline (writer only) | ${fmt(N / ingestS)} packets/s |`);
  console.log(`| analyzer on the backlog | ${fmt(r.pairsInserted)} pairs in ${analyzeS.toFixed(2)} s = ${fmt(r.pairsInserted / analyzeS)} pairs/s, ${fmt(N / analyzeS)} packets/s |`);
  console.log(`| under load (ingest ${fmt(N / loadS)} packets/s, ${cycles} cycles) | lag ${lagText(lags)}; drain after load ${drainS.toFixed(2)} s |`);
  await ch.close();
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
