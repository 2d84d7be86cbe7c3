/**
 * Real ClickHouse for integration tests: CLICKHOUSE_URL when set, else embedded chDB in a
 * per-process temporary directory. Every test gets its own database, so tests never share rows.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClickHouse, createLaneClients, type ClickHouseClient, type LaneClients } from '../../platform/clickhouse/client.ts';
import { cutoverAtEpoch } from '../../platform/clickhouse/cutover.ts';
import { createClickHouseDoor, type ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { migrate } from '../../platform/clickhouse/migrate.ts';
import { seedDataDir, TEMPLATE_DATABASE, TEMPLATE_RETENTION } from './data-template.ts';

const RETENTION = TEMPLATE_RETENTION;
let shared: Promise<ClickHouseClient> | undefined;

const target = () => ({
  url: process.env.CLICKHOUSE_URL || undefined,
  user: process.env.CLICKHOUSE_USER || undefined,
  password: process.env.CLICKHOUSE_PASSWORD || undefined,
  database: 'unused',
  dataDir: process.env.TOOL_AUDIT_TEST_DATA_DIR ?? join(tmpdir(), `tool-audit-test-${process.pid}`),
});

// Embedded: each process starts its engine on a copy of the run's migrated data directory
// (data-template.ts), so it does not replay every migration itself (~4 s of CPU a process).
const seeded = (): boolean => !process.env.CLICKHOUSE_URL;

/** The process-wide client (chDB admits one data directory per process). */
export function testClickHouse(): Promise<ClickHouseClient> {
  shared ??= (async () => {
    const t = target();
    if (seeded() && !existsSync(t.dataDir)) await seedDataDir(t.dataDir);
    return createClickHouse(t);
  })();
  return shared;
}

/** Clients of every lane on the test data directory, as serve opens them (the caller closes them). */
export async function testLaneClients(opts: { readConnections?: number; jobThreads?: number } = {}): Promise<LaneClients> {
  await testClickHouse(); // the directory is made and migrated through the shared client first
  return createLaneClients({ ...target(), readConnections: opts.readConnections ?? 2, ingestConnections: 2, jobConnections: 1, jobThreads: opts.jobThreads ?? 1, jobNice: 19, mergeNice: 19, embeddedConfig: undefined });
}

/**
 * A fresh, migrated database with a unique name: the raw client (what tests check with, apart
 * from the code under test) and the ClickHouse door of the database (what the code under test takes).
 */
export async function freshDatabase(prefix = 't'): Promise<{ ch: ClickHouseClient; db: string; door: ClickHouseDoor }> {
  const ch = await testClickHouse();
  const db = uniqueName(prefix);
  await copyDatabase(ch, await templateDatabase(ch), db);
  return { ch, db, door: createClickHouseDoor(ch, db) };
}

const uniqueName = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
let template: Promise<string> | undefined;

/**
 * The process's migrated database that fresh ones are copied from. Migrating replays every
 * migration's DDL (over 300 statements, ~4 s on embedded ClickHouse); a copy is one statement per
 * table and view. `migrated-copy.test.ts` checks a copy is the schema migrate makes.
 */
export function templateDatabase(ch: ClickHouseClient): Promise<string> {
  template ??= (async () => {
    if (seeded()) {
      // The seeded database: nothing in a test process writes it (its tests name their own databases).
      const [found] = await rows<{ n: string }>(ch, 'SELECT count() AS n FROM system.databases WHERE name = {db:String}', { db: TEMPLATE_DATABASE });
      if (Number(found?.n) === 1) return TEMPLATE_DATABASE;
    }
    const db = uniqueName('template');
    await migrate(createClickHouseDoor(ch, db), { retentionDays: RETENTION });
    return db;
  })();
  return template;
}

/**
 * Makes `to` a copy of database `from`: its tables (schema and rows: a migrated database holds
 * only its migrations' list and the aggregates' cutover) and then its views, each as `from`
 * declares it, with `from`'s name replaced by `to`'s (both are unique names no SQL text holds
 * otherwise).
 */
export async function copyDatabase(ch: ClickHouseClient, from: string, to: string): Promise<void> {
  const objects = await rows<{ name: string; engine: string; create: string; n: string | null }>(
    ch,
    "SELECT name, engine, create_table_query AS create, total_rows AS n FROM system.tables WHERE database = {db:String} ORDER BY engine = 'MaterializedView', metadata_modification_time, name",
    { db: from },
  );
  await ch.command({ query: 'CREATE DATABASE {db:Identifier}', query_params: { db: to } });
  for (const o of objects) {
    await ch.command({ query: o.create.replaceAll(`${from}.`, `${to}.`) });
    if (Number(o.n ?? 0) > 0) await ch.command({ query: 'INSERT INTO {to:Identifier}.{t:Identifier} SELECT * FROM {from:Identifier}.{t:Identifier}', query_params: { to, from, t: o.name } });
  }
}

/**
 * Makes the window aggregates' views (migration 015) count every call inserted from now on, whatever
 * its ingested_at: they count calls ingested after their cutover, which the migration set to now,
 * and tests writing calls straight into the table back-date ingested_at. Only on an empty database
 * (as the benchmarks' history builder does), or calls would be counted by neither.
 */
export function aggregatesFromEpoch(ch: ClickHouseClient, db: string): Promise<void> {
  return cutoverAtEpoch(createClickHouseDoor(ch, db));
}

/** Runs a query and returns its rows. */
export async function rows<T = Record<string, unknown>>(ch: ClickHouseClient, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const rs = await ch.query({ query, query_params: params, format: 'JSONEachRow' });
  return rs.json<T>();
}

/** count() of a table of db. */
export async function count(ch: ClickHouseClient, db: string, table: string, where = '1'): Promise<number> {
  const r = await rows<{ c: string }>(ch, `SELECT count() AS c FROM {db:Identifier}.{t:Identifier} WHERE ${where}`, { db, t: table });
  return Number(r[0]?.c ?? 0);
}

/** The ClickHouse door of `db` on the test client: what the code under test takes. */
export function doorOf(ch: ClickHouseClient, db: string): ClickHouseDoor {
  return createClickHouseDoor(ch, db);
}
