/**
 * npm run bench:manifest-audit — the auditor's manifest rules (M1–M7) against ingest, on embedded
 * ClickHouse, after the pattern of bench:analyzer.
 *
 * 1. Backlog: N calls (tasks of 20 calls over 10 minutes; retries, failures, unknown tools,
 *    calls without cost) written through the real ingest pipeline, then the bench manifest is
 *    applied and the manifest rules judge them all: calls/s.
 * 2. Lag under load: N more calls written as fast as the pipeline takes them while the
 *    dependency analyzer and the auditor (I-rules and M-rules) cycle as in `serve`; the lag of the
 *    M-rules (newest ingested_at − their watermark) is sampled each cycle.
 *
 * Usage: npm run bench:manifest-audit [-- calls]   (default 200000)
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuditor } from '../../analyzers/auditor.ts';
import { createDependencyAnalyzer } from '../../analyzers/dependency-runner.ts';
import { MANIFEST_AUDIT_JOB } from '../../analyzers/manifest-audit.ts';
import { applyManifest } from '../../analyzers/manifest-store.ts';
import { newestIngested, readWatermark } from '../../analyzers/store.ts';
import { createSegmentWriter } from '../../ingest/segment-writer.ts';
import { createClickHouse } from '../../platform/clickhouse/client.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { migrate } from '../../platform/clickhouse/migrate.ts';
import { silentLogger } from '../../platform/logger.ts';
import { MetricsRegistry } from '../../platform/metrics.ts';
import { canonicalArgs } from '../../schemas/canonical-json.ts';
import { sha256Hex } from '../../schemas/hashing.ts';
import { benchManifest } from './bench-manifest.ts';
import { lagText, lagUnderLoad } from '../ingest/lag-under-load.ts';

const N = Number(process.argv[2] ?? 200_000);
const CALLS_PER_TASK = 20;
const BATCH = 5000;
const TOOLS = ['search_web', 'fetch_url', 'python_execute', 'sql_query', 'send_email', 'read_file', 'llm_summarize', 'legacy_tool'];

function packets(count: number, startMs: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const k = i % CALLS_PER_TASK;
    // Every fifth call repeats the one before (same tool and args): a retry when that one failed.
    const j = k % 5 === 4 ? i - 1 : i;
    const args = { q: `query ${j % 5000}`, page: j % 3 };
    const failed = i % 7 === 3;
    const call_id = randomUUID();
    const invocation = {
      call_id, task_id: `mb-${Math.floor(i / CALLS_PER_TASK)}-${startMs}`, tool_id: TOOLS[j % TOOLS.length], agent_id: 'L', orchestrator: 'kernel', args,
      args_hash: sha256Hex(canonicalArgs(args)), status: failed ? 'error' : 'success', duration_ms: 100 + (i % 97) * 700, result_summary: {},
      error: failed ? 'HTTP 503' : null, cost_usd: i % 11 === 0 ? null : 0.001, tokens_used: null,
      created_at: new Date(startMs + k * 30_000 + (i % 2) * 5).toISOString(),
    };
    out.push(JSON.stringify({ type: 'tool_call', call_id, invocation }));
  }
  return out;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tool-audit-bench-manifest-'));
  const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: 'bench', dataDir: dir });
  const db = 'bench_manifest';
  const door = createClickHouseDoor(ch, db);
  await migrate(door, { retentionDays: { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 } });
  const metrics = new MetricsRegistry();
  const logger = silentLogger();
  const writer = createSegmentWriter({ clickhouse: door, maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics, logger });
  const common = { clickhouse: door, windowMs: 60_000, metrics, logger };
  const analyzer = createDependencyAnalyzer({ ...common, overlapMs: 30_000 });
  const auditor = createAuditor({ ...common, graceMs: 0 });
  const write = async (raws: string[]) => {
    for (let i = 0; i < raws.length; i += BATCH) await writer.write(raws.slice(i, i + BATCH).map((raw, k) => ({ raw, source: { kind: 'http', requestId: `b${i}`, index: k } })));
  };
  const violations = async () => Number((await door.select<{ n: string }>("SELECT count() AS n FROM {db:Identifier}.violations WHERE startsWith(invariant, 'M')"))[0]?.n ?? 0);

  // 1. Backlog: the calls are there before the manifest; the first manifest reaches back to all.
  const t0 = performance.now();
  await write(packets(N, Date.UTC(2026, 10, 1)));
  const ingestS = (performance.now() - t0) / 1000;
  await analyzer.runOnce();
  await applyManifest(door, benchManifest());
  const t1 = performance.now();
  await auditor.runOnce();
  const auditS = (performance.now() - t1) / 1000;
  const backlogViolations = await violations();

  // 2. Lag while ingest runs at full speed.
  const { loadS, cycles, lags, drainS } = await lagUnderLoad(
    () => write(packets(N, Date.UTC(2026, 10, 2))),
    async () => {
      await analyzer.runOnce();
      await auditor.runOnce();
      const newest = await newestIngested(door, 0);
      return Math.max(0, newest - (await readWatermark(door, MANIFEST_AUDIT_JOB))) / 1000;
    },
  );

  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  console.log(`bench:manifest-audit — ${fmt(N)} calls per phase, ${CALLS_PER_TASK} calls/task, ${TOOLS.length} tools, embedded ClickHouse`);
  console.log('| phase | figure |');
  console.log('|---|---|');
  console.log(`| ingest pipeline (writer only) | ${fmt(N / ingestS)} calls/s |`);
  console.log(`| auditor with M1–M7 on the backlog (first manifest reaching back) | ${fmt(N)} calls in ${auditS.toFixed(2)} s = ${fmt(N / auditS)} calls/s; ${fmt(backlogViolations)} M violations |`);
  console.log(`| under load (ingest ${fmt(N / loadS)} calls/s, ${cycles} analyzer + auditor cycles) | M-rules lag ${lagText(lags)}; drain after load ${drainS.toFixed(2)} s; ${fmt(await violations())} M violations in all |`);
  await ch.close();
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
