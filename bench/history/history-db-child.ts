/**
 * Child process of `npm run bench:history` that opens a data directory with embedded ClickHouse
 * (chDB holds one data directory per process, so the benchmark never opens one itself):
 *
 *   history-db-child.ts build   '<{"dataDir", "shape"}>'  → prints the HistoryMeta as JSON
 *   history-db-child.ts inspect '<{"dataDir"}>'           → prints the RunState as JSON
 *   history-db-child.ts migrate '<{"dataDir"}>'           → applies new migrations, waits for their mutations
 *   history-db-child.ts storage '<{"dataDir"}>'           → prints the StorageReport (bench/history/storage-report.ts) as JSON
 *   history-db-child.ts jobs    '<{"dataDir"}>'           → runs the dedup indexer and the audit log builder over everything stored
 *
 * Progress goes to stderr; the last stdout line is the answer.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuditLogBuilder } from '../../analyzers/audit-log/builder.ts';
import { fileLedger } from '../../analyzers/audit-log/ledger.ts';
import { refreshDedupIndex } from '../../analyzers/dedup-index.ts';
import { createClickHouse } from '../../platform/clickhouse/client.ts';
import { createClickHouseDoor, type ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { removeReplacedParts } from '../../platform/clickhouse/part-cleanup.ts';
import { silentLogger } from '../../platform/logger.ts';
import { buildHistory, HISTORY_DB, inspectRun, migrateHistory, type HistoryShape } from './history-data.ts';
import { storageReport } from './storage-report.ts';

async function main(): Promise<void> {
  const [cmd, json] = process.argv.slice(2);
  const o = JSON.parse(json ?? '{}') as { dataDir: string; shape?: HistoryShape };
  const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: HISTORY_DB, dataDir: o.dataDir });
  const log = (s: string) => process.stderr.write(`${s}\n`);
  let out: unknown;
  if (cmd === 'build' && o.shape) out = await buildHistory(ch, HISTORY_DB, o.shape, log);
  else if (cmd === 'inspect') out = await inspectRun(ch, HISTORY_DB);
  else if (cmd === 'migrate') out = await migrateHistory(ch, HISTORY_DB, log);
  else if (cmd === 'storage') out = await storageReport(ch, HISTORY_DB);
  else if (cmd === 'jobs') out = await runJobs(createClickHouseDoor(ch, HISTORY_DB), log);
  else throw new Error(`usage: history-db-child.ts build|inspect|migrate|storage|jobs JSON (got ${cmd})`);
  // The history is copied and measured after this process exits: active parts only.
  const left = await removeReplacedParts(createClickHouseDoor(ch, HISTORY_DB));
  if (left.outdatedParts || left.merges) log(`  ${left.outdatedParts} replaced parts and ${left.merges} merges left after ${left.waitedMs} ms`);
  await ch.close();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

/** The dedup index and the audit log over everything stored, as the jobs leave them once caught up. */
async function runJobs(door: ClickHouseDoor, log: (s: string) => void) {
  let t = performance.now();
  const dedup = await refreshDedupIndex(door);
  const dedupSeconds = (performance.now() - t) / 1000;
  log(`  dedup index: ${dedup.copied.toLocaleString('en')} calls copied in ${dedupSeconds.toFixed(0)} s`);
  t = performance.now();
  // The whole history is older than a minute: no grace; one head at the end.
  const builder = createAuditLogBuilder({ clickhouse: door, logger: silentLogger(), signingKey: generateKeyPairSync('ed25519').privateKey, headIntervalMs: 0, graceMs: 0, stepRows: 1_000_000, origin: 'tool-audit/bench', ledger: fileLedger(mkdtempSync(join(tmpdir(), 'audit-log-ledger-'))) });
  const built = await builder.runOnce();
  const auditSeconds = (performance.now() - t) / 1000;
  log(`  audit log: ${built.treeSize.toLocaleString('en')} leaves in ${auditSeconds.toFixed(0)} s`);
  return { dedupSeconds, auditSeconds, leaves: built.treeSize };
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`history-db-child failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
