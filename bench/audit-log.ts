/**
 * `npm run bench:audit-log` (issue 30): what the audit log costs on a full database.
 *
 *   npm run bench:audit-log -- [--invocations 10000000] [--data-dir ./.bench-data/history] [--proofs 300] [--verify true|false] [--copy link] [--json FILE]
 *
 * On a copy of the bench:history history (built or reused, migrated), in this process alone
 * (embedded ClickHouse: one process per data directory): the builder catches up on every stored
 * call, output, dependency and violation (seconds, leaves per second); `verify` over the whole log
 * (seconds: target ≤ 60 s at 10 M calls); `--proofs` proofs of random calls through the read
 * queries as the route serves them (p50 / p95 / p99: target p95 ≤ 50 ms); and the log's bytes on
 * disk per leaf. The ingest cost of the log is bench:ingest's, with `--ingest-env AUDIT_LOG=off`
 * for the run without it.
 */
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createAuditLogBuilder } from '../analyzers/audit-log/builder.ts';
import { fileLedger } from '../analyzers/audit-log/ledger.ts';
import { publicKeyText } from '../analyzers/audit-log/heads.ts';
import { verifyLog } from '../analyzers/audit-log/verify.ts';
import { silentLogger } from '../platform/logger.ts';
import { createReadQueries } from '../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../queries/sql.ts';
import { runBench } from './bench-process.ts';
import { openHistoryCopy } from './history-copy.ts';
import { historyShapeOf, historyShapeOptions } from './history-db.ts';
import { pct } from './history-load.ts';

const { values: opt } = parseArgs({
  options: {
    ...historyShapeOptions('10000000'),
    copy: { type: 'string', default: 'link' },
    proofs: { type: 'string', default: '300' },
    verify: { type: 'string', default: 'true' },
    json: { type: 'string' },
  },
});
const shape = historyShapeOf(opt);
const log = (s: string) => process.stderr.write(`[bench:audit-log] ${s}\n`);

async function main(): Promise<void> {
  // The door serve opens: a connection per lane (reads side by side), as the route is served.
  const { meta, config, door } = await openHistoryCopy({ dataDir: opt['data-dir'] as string, shape, copy: opt.copy, log });
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  // The whole history is older than a minute: no grace needed; one head at the end.
  const builder = createAuditLogBuilder({ clickhouse: door, logger: silentLogger(), signingKey: privateKey, headIntervalMs: 0, graceMs: 0, stepRows: 1_000_000, origin: 'tool-audit/bench', ledger: fileLedger(mkdtempSync(join(tmpdir(), 'audit-log-ledger-'))) });
  log(`building the log over ${meta.rows.invocations.toLocaleString('en')} calls and what goes with them`);
  let t = performance.now();
  const built = await builder.runOnce();
  const buildSeconds = (performance.now() - t) / 1000;
  log(`built: ${built.treeSize.toLocaleString('en')} leaves in ${buildSeconds.toFixed(1)} s`);

  t = performance.now();
  // Retention as long as the history's span: every row of it is live, none expired.
  const verified = opt.verify === 'false' ? { findings: [] } : await verifyLog(door, { retentionDays: { tool_call: 3650, output: 3650, dependency: 3650, violation: 3650 }, publicKey: publicKeyText(publicKey) });
  const verifySeconds = opt.verify === 'false' ? Number.NaN : (performance.now() - t) / 1000;
  log(`verify: ${verified.findings.length} findings in ${verifySeconds.toFixed(1)} s${'seconds' in verified ? ` (records against their leaves ${verified.seconds.records.toFixed(1)} s, the tree ${verified.seconds.tree.toFixed(1)} s)` : ''}`);

  const queries = createReadQueries(door, config.clickhouse.database, DEFAULT_QUERY_CONTEXT);
  const ids = await door.select<{ id: string }>(`SELECT toString(call_id) AS id FROM {db:Identifier}.tool_invocations ORDER BY rand() LIMIT {n:UInt64}`, { n: Number(opt.proofs) });
  const ms: number[] = [];
  for (const { id } of ids) {
    const t0 = performance.now();
    const p = await queries.callProof({ callId: id });
    ms.push(performance.now() - t0);
    if ('why' in p) throw new Error(`no proof for ${id}: ${p.why}`);
  }
  const [bytes] = await door.select<{ table: string; b: string }>(
    "SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE database = {db:String} AND active AND table LIKE 'audit_log_%'",
  );
  await door.close();
  const figures = {
    calls: meta.rows.invocations,
    leaves: built.treeSize,
    buildSeconds,
    leavesPerSecond: built.treeSize / buildSeconds,
    verifySeconds,
    findings: verified.findings.length,
    proofs: ms.length,
    proofMs: { p50: pct(ms, 0.5), p95: pct(ms, 0.95), p99: pct(ms, 0.99) },
    bytesPerLeaf: Number(bytes?.b ?? 0) / Math.max(1, built.treeSize),
  };
  process.stdout.write(
    [
      `bench:audit-log — N = ${figures.calls.toLocaleString('en')} calls, ${figures.leaves.toLocaleString('en')} leaves`,
      `build (catch-up from nothing): ${figures.buildSeconds.toFixed(1)} s, ${Math.round(figures.leavesPerSecond).toLocaleString('en')} leaves/s`,
      `verify (whole log): ${figures.verifySeconds.toFixed(1)} s, ${figures.findings} findings (target ≤ 60 s at 10 M calls)`,
      `proof of a call (${figures.proofs}): p50 ${figures.proofMs.p50.toFixed(1)} / p95 ${figures.proofMs.p95.toFixed(1)} / p99 ${figures.proofMs.p99.toFixed(1)} ms (target p95 ≤ 50 ms)`,
      `log on disk: ${figures.bytesPerLeaf.toFixed(1)} bytes per leaf`,
      '',
    ].join('\n'),
  );
  if (opt.json) writeFileSync(opt.json, JSON.stringify(figures, null, 2));
}

runBench(main, () => undefined, log);
