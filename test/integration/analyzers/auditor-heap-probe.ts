/**
 * Child process of auditor-heap.test.ts. `fill`: creates the database and, inside ClickHouse
 * (INSERT … SELECT FROM numbers()), `n` calls of one stream whose created_at runs backwards and
 * whose status is a failure without an error: every call breaks I4, every call but the first
 * I11. `audit`: one auditor run over them (started under a small heap by the parent). Prints one
 * JSON line: the run's result, its duration and the violations metric.
 *
 *   node --max-old-space-size=64 --import tsx auditor-heap-probe.ts '{"dataDir":…,"db":…,"phase":"audit"}'
 */
import { createAuditor } from '../../../analyzers/auditor.ts';
import { DEPENDENCY_JOB } from '../../../analyzers/dependency-runner.ts';
import { writeWatermark } from '../../../analyzers/store.ts';
import { createClickHouse } from '../../../platform/clickhouse/client.ts';
import { createClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { migrate } from '../../../platform/clickhouse/migrate.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';

interface ProbeArgs {
  dataDir: string;
  db: string;
  phase: 'fill' | 'audit';
  n?: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as ProbeArgs;
const client = await createClickHouse({ url: undefined, user: undefined, password: undefined, dataDir: args.dataDir, database: 'unused' });
const door = createClickHouseDoor(client, args.db);
const HOUR = 3600_000;

if (args.phase === 'fill') {
  await migrate(door, { retentionDays: { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 } });
  // One row per millisecond of ingest, an hour ago; created_at falls as the stream's offset grows.
  const base = Date.now() - HOUR;
  await door.command(
    `INSERT INTO {db:Identifier}.tool_invocations (call_id, task_id, tool_id, agent_id, orchestrator, instance_id, args, status,
       duration_ms, result_summary, error, created_at, fingerprint, source, ingested_at)
     SELECT generateUUIDv4(number), '', 'search', 'agent', 'gateway', 'gw-1', '{}', 'timeout',
       1, '', NULL, fromUnixTimestamp64Milli({base:Int64} - toInt64(number), 'UTC'), repeat('0', 32), concat('kafka:calls/0@', toString(number)),
       fromUnixTimestamp64Milli({base:Int64} + toInt64(number), 'UTC')
     FROM numbers({n:UInt64})`,
    { base, n: args.n ?? 1_000_000 },
  );
  await writeWatermark(door, DEPENDENCY_JOB, Date.now());
  process.stdout.write(`${JSON.stringify({ filled: args.n })}\n`);
} else {
  const metrics = new MetricsRegistry();
  const auditor = createAuditor({ clickhouse: door, windowMs: 60_000, graceMs: 0, metrics, logger: silentLogger() });
  const started = performance.now();
  const result = await auditor.runOnce();
  const ms = Math.round(performance.now() - started);
  const metric = Object.fromEntries(['I4', 'I11'].map((invariant) => [invariant, metrics.value('tool_audit_violations_total', { invariant })]));
  const heapMb = Math.round(process.memoryUsage().heapUsed / 2 ** 20);
  process.stdout.write(`${JSON.stringify({ result, ms, metric, heapMb })}\n`);
}
await door.close();
