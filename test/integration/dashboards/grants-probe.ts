/**
 * Child process of grants.test.ts: opens embedded ClickHouse (chDB) with a users.xml whose
 * `default` user holds exactly the given GRANTs (chDB runs every query as `default` and has no
 * writable access storage for CREATE USER, so the init script's grants are moved onto it), then
 * runs a role's real work and its forbidden statements. Prints one JSON line: what succeeded,
 * and each forbidden statement's error.
 *
 *   node --import tsx grants-probe.ts '{"dataDir":…,"db":…,"role":"reader","grants":["GRANT SELECT ON db.*"]}'
 */
import { createRequire } from 'node:module';
import { createAuditor } from '../../../analyzers/auditor.ts';
import { createDependencyAnalyzer } from '../../../analyzers/dependency-runner.ts';
import { createClickHouse } from '../../../platform/clickhouse/client.ts';
import { migrate } from '../../../platform/clickhouse/migrate.ts';
import { buildDashboards } from '../../../dashboards/index.ts';
import { expandPanelSql } from '../../../dashboards/grafana-expand.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { generateWorkload } from './workload.ts';
import { createClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { grantsConfig } from '../../helpers/embedded-grants.ts';

interface ProbeArgs {
  dataDir: string;
  db: string;
  role: 'admin' | 'ingest' | 'analyzer' | 'reader';
  /** GRANT statements without `TO …`; none = full access (the admin). */
  grants: string[];
}

const args = JSON.parse(process.argv[2] ?? '{}') as ProbeArgs;
const configFile = grantsConfig(args.role === 'admin' ? 'admin' : args.grants);

// The first connection to a data directory starts the engine with its arguments; the client below
// opens a second connection to the same engine.
const { Session } = createRequire(import.meta.url)('chdb') as { Session: new (path: string, opts: { connectionArgs: string[] }) => { query(q: string, f: string): string; close(): void } };
const session = new Session(args.dataDir, { connectionArgs: [`--config-file=${configFile}`] });
const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: args.db, dataDir: args.dataDir });
const db = args.db;
const metrics = new MetricsRegistry();
const logger = silentLogger();
const out: { grants: string[]; did: Record<string, unknown>; forbidden: Record<string, string> } = { grants: [], did: {}, forbidden: {} };
out.grants = session.query('SHOW GRANTS', 'TSV').trim().split('\n');

/** Runs a statement that must be refused; records the error (or 'ALLOWED'). */
async function refused(name: string, sql: string): Promise<void> {
  try {
    await ch.command({ query: sql });
    out.forbidden[name] = 'ALLOWED';
  } catch (e) {
    out.forbidden[name] = (e as Error).message.split('\n')[0]?.slice(0, 300) ?? 'error';
  }
}

const destructive = async () => {
  await refused('alter_delete', `ALTER TABLE ${db}.tool_invocations DELETE WHERE 1`);
  await refused('alter_update', `ALTER TABLE ${db}.tool_invocations UPDATE agent_id = 'x' WHERE 1`);
  await refused('alter_add_column', `ALTER TABLE ${db}.tool_invocations ADD COLUMN probe UInt8`);
  await refused('alter_modify_ttl', `ALTER TABLE ${db}.tool_invocations MODIFY TTL toDateTime(created_at) + toIntervalDay(1)`);
  await refused('lightweight_delete', `DELETE FROM ${db}.tool_invocations WHERE 1`);
  await refused('truncate', `TRUNCATE TABLE ${db}.tool_invocations`);
  await refused('drop_table', `DROP TABLE ${db}.tool_workflows`);
  await refused('drop_database', `DROP DATABASE ${db}`);
  await refused('create_table', `CREATE TABLE ${db}.probe (a UInt8) ENGINE = Memory`);
  await refused('optimize', `OPTIMIZE TABLE ${db}.tool_invocations FINAL`);
};

const w = generateWorkload({ seed: 11, tasks: 8 });
switch (args.role) {
  case 'admin':
    out.did.migrated = (await migrate(createClickHouseDoor(ch, db), { retentionDays: { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 } })).applied;
    break;
  case 'ingest': {
    const writer = createSegmentWriter({ clickhouse: createClickHouseDoor(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics, logger });
    const outcomes = await writer.write(w.packets);
    // A redelivery: every key is looked up and found (the SELECT grants of the look-ups).
    const again = await writer.write(w.packets.slice(0, 20));
    out.did.accepted = outcomes.filter((o) => o.status === 'accepted').length;
    out.did.rejected = outcomes.filter((o) => o.status === 'rejected').length;
    out.did.redelivered_duplicates = again.filter((o) => o.status === 'duplicate').length;
    await destructive();
    await refused('insert_violations', `INSERT INTO ${db}.violations (violation_key, invariant, packet_type, ids, detail) VALUES ('k', 'I4', 'tool_call', [], 'probe')`);
    await refused('select_violations', `SELECT count() FROM ${db}.violations`);
    break;
  }
  case 'analyzer': {
    const common = { clickhouse: createClickHouseDoor(ch, db), windowMs: 60_000, metrics, logger };
    out.did.analyzer = await createDependencyAnalyzer({ ...common, overlapMs: 60_000 }).runOnce();
    out.did.auditor = await createAuditor({ ...common, graceMs: 0, now: () => Date.now() + 1000 }).runOnce();
    await destructive();
    await refused('insert_invocations', `INSERT INTO ${db}.tool_invocations (call_id) VALUES (generateUUIDv4())`);
    await refused('insert_quarantine', `INSERT INTO ${db}.quarantine (source_key) VALUES ('probe')`);
    break;
  }
  case 'reader': {
    let queries = 0;
    let rowsSeen = 0;
    for (const f of buildDashboards({ database: db })) {
      const vars = Object.fromEntries((f.dashboard.templating.list ?? []).map((v) => [v.name, String(v.current?.value ?? '')]));
      const sqls = [...(f.dashboard.panels ?? []).flatMap((p) => ((p as { targets?: Array<{ rawSql: string }> }).targets ?? []).map((t) => t.rawSql))];
      for (const sql of sqls) {
        const rs = await ch.query({ query: expandPanelSql(sql, { fromMs: w.fromMs, toMs: w.toMs, variables: vars }), format: 'JSONEachRow' });
        rowsSeen += (await rs.json()).length;
        queries++;
      }
    }
    out.did.panel_queries = queries;
    out.did.panel_rows = rowsSeen;
    await destructive();
    await refused('insert_invocations', `INSERT INTO ${db}.tool_invocations (call_id) VALUES (generateUUIDv4())`);
    await refused('insert_quarantine', `INSERT INTO ${db}.quarantine (source_key) VALUES ('probe')`);
    break;
  }
}

await ch.close();
session.close();
process.stdout.write(`${JSON.stringify(out)}\n`);
