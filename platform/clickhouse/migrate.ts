/**
 * Versioned, idempotent schema migrations. Each file in ./migrations is applied once, in
 * name order, and recorded in `schema_migrations`; retention (TTL) is re-synced from the
 * configuration on every run without rewriting data.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/** What a migration run did. */
export interface MigrateResult {
  applied: string[];
  alreadyApplied: string[];
}

/** Creates or upgrades the schema in `database`. Safe to run concurrently with readers. */
export async function migrate(
  ch: ClickHouseClient,
  opts: { database: string; retentionDays: Config['retentionDays'] },
): Promise<MigrateResult> {
  const params = {
    db: opts.database,
    invocations_days: opts.retentionDays.invocations,
    outputs_days: opts.retentionDays.outputs,
    workflows_days: opts.retentionDays.workflows,
    quarantine_days: opts.retentionDays.quarantine,
  };
  try {
    await ch.command({ query: 'CREATE DATABASE IF NOT EXISTS {db:Identifier}', query_params: params });
    await ch.command({
      query: `CREATE TABLE IF NOT EXISTS {db:Identifier}.schema_migrations
              (name String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)) ENGINE = MergeTree ORDER BY name`,
      query_params: params,
    });
    const done = await ch.query({
      query: 'SELECT DISTINCT name FROM {db:Identifier}.schema_migrations',
      query_params: params,
      format: 'JSONEachRow',
    });
    const applied = new Set((await done.json<{ name: string }>()).map((r) => r.name));
    const result: MigrateResult = { applied: [], alreadyApplied: [] };
    for (const file of readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort()) {
      if (applied.has(file)) {
        result.alreadyApplied.push(file);
        continue;
      }
      for (const statement of splitStatements(readFileSync(MIGRATIONS_DIR + file, 'utf8'))) {
        await ch.command({ query: statement, query_params: params });
      }
      await ch.insert({ table: `${opts.database}.schema_migrations`, values: [{ name: file }], format: 'JSONEachRow' });
      result.applied.push(file);
    }
    await syncRetention(ch, params);
    return result;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('MIGRATION_FAILED', `migration of database ${opts.database} failed: ${(err as Error).message}`, {
      retryable: true,
      cause: err,
    });
  }
}

const RETENTION: Array<[table: string, column: string, param: string]> = [
  ['tool_invocations', 'created_at', 'invocations_days'],
  ['dedup_repeats', 'created_at', 'invocations_days'],
  ['tool_outputs', 'created_at', 'outputs_days'],
  ['orphan_outputs', 'created_at', 'outputs_days'],
  ['output_contents', 'last_seen', 'outputs_days'],
  ['tool_workflows', 'ingested_at', 'workflows_days'],
  ['quarantine', 'received_at', 'quarantine_days'],
  ['violations', 'detected_at', 'quarantine_days'],
];

async function syncRetention(ch: ClickHouseClient, params: Record<string, unknown>): Promise<void> {
  for (const [table, column, param] of RETENTION) {
    await ch.command({
      // Metadata only: existing parts are not rewritten (materialize_ttl_after_modify = 0).
      query: `ALTER TABLE {db:Identifier}.{table:Identifier} MODIFY TTL toDateTime({column:Identifier}) + toIntervalDay({${param}:UInt32})`,
      query_params: { ...params, table, column },
      clickhouse_settings: { materialize_ttl_after_modify: 0 },
    });
  }
  // task_rows holds rows of three segments; each kind keeps its segment's retention.
  await ch.command({
    query: `ALTER TABLE {db:Identifier}.task_rows MODIFY TTL toDateTime(ts) + toIntervalDay(multiIf(kind = 'call', {invocations_days:UInt32}, kind = 'output', {outputs_days:UInt32}, {workflows_days:UInt32}))`,
    query_params: params,
    clickhouse_settings: { materialize_ttl_after_modify: 0 },
  });
}

/** Splits a migration file into statements: `;` at the end of a line ends one; `--` lines are comments. */
export function splitStatements(sql: string): string[] {
  const withoutComments = sql
    .split('\n')
    .filter((l) => !l.trim().startsWith('--'))
    .join('\n');
  return withoutComments
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter(Boolean);
}
