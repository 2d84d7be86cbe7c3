/**
 * Versioned, idempotent schema migrations. Each file in ./migrations is applied once, in
 * name order, and recorded in `schema_migrations`; retention (TTL) is re-synced from the
 * configuration on every run without rewriting data.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.ts';
import { AppError, isRetryable } from '../errors.ts';
import { insertsBegunEnded, settleCutover } from './cutover.ts';
import type { ClickHouseDoor } from './door.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/** What a migration run did. */
export interface MigrateResult {
  applied: string[];
  alreadyApplied: string[];
}

/** Creates or upgrades the schema in the door's database. Safe to run concurrently with readers. */
export async function migrate(ch: ClickHouseDoor, opts: { retentionDays: Config['retentionDays'] }): Promise<MigrateResult> {
  const params = {
    invocations_days: opts.retentionDays.invocations,
    outputs_days: opts.retentionDays.outputs,
    workflows_days: opts.retentionDays.workflows,
    quarantine_days: opts.retentionDays.quarantine,
  };
  try {
    await ch.command('CREATE DATABASE IF NOT EXISTS {db:Identifier}', params);
    await ch.command(
      `CREATE TABLE IF NOT EXISTS {db:Identifier}.schema_migrations
       (name String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)) ENGINE = MergeTree ORDER BY name`,
      params,
    );
    const applied = new Set((await ch.select<{ name: string }>('SELECT DISTINCT name FROM {db:Identifier}.schema_migrations', params)).map((r) => r.name));
    const result: MigrateResult = { applied: [], alreadyApplied: [] };
    for (const file of readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort()) {
      if (applied.has(file)) {
        result.alreadyApplied.push(file);
        continue;
      }
      await BEFORE[file]?.(ch);
      for (const statement of splitStatements(readFileSync(MIGRATIONS_DIR + file, 'utf8'))) {
        await ch.command(statement, params);
      }
      await ch.insertRows('schema_migrations', [{ key: file, row: { name: file } }]);
      result.applied.push(file);
    }
    await syncRetention(ch, params);
    return result;
  } catch (err) {
    throw new AppError('MIGRATION_FAILED', `migration of database ${ch.database} failed: ${(err as Error).message}`, {
      retryable: isRetryable(err),
      cause: err,
    });
  }
}

/** Steps run before a migration file: waits its statements depend on (SQL cannot wait). */
const BEFORE: Record<string, (ch: ClickHouseDoor) => Promise<void>> = {
  '017_window_aggregates_backfill.sql': settleCutover,
  '037_key_counts_backfill.sql': insertsBegunEnded,
};

/**
 * TTL of each table: its time column + the retention of `param` (+ `extraDays`). The aggregates of
 * migration 015 keep a day more than their calls (an hour's or day's row must outlive every call it
 * counts; reads start at the oldest stored call, so the extra day is never read).
 */
const RETENTION: Array<[table: string, column: string, param: string, extraDays?: number]> = [
  ['tool_invocations', 'created_at', 'invocations_days'],
  ['dedup_repeats', 'created_at', 'invocations_days'],
  ['cache_key_calls', 'last_at', 'invocations_days'],
  ['cache_key_replays', 'replayed_at', 'invocations_days'],
  // A month past its newest call's month: every call it counts has expired by then (036).
  ['key_counts', 'last_month', 'invocations_days', 31],
  ['tool_outputs', 'created_at', 'outputs_days'],
  ['orphan_outputs', 'created_at', 'outputs_days'],
  ['output_contents', 'last_seen', 'outputs_days'],
  ['tool_workflows', 'ingested_at', 'workflows_days'],
  ['quarantine', 'received_at', 'quarantine_days'],
  ['quarantine_replays', 'replayed_at', 'quarantine_days'],
  ['violations', 'detected_at', 'quarantine_days'],
  ['budget_decisions', 'decided_at', 'invocations_days'],
  ['call_keys', 'created_at', 'invocations_days'],
  ['output_keys', 'created_at', 'outputs_days'],
  ['quarantine_keys', 'received_at', 'quarantine_days'],
  ['workflow_optimizations', 'created_at', 'workflows_days'],
  ['model_turns', 'created_at', 'invocations_days'],
  ['agent_runs', 'created_at', 'invocations_days'],
  ['task_hours', 'hour', 'invocations_days', 1],
  ['tool_hours', 'hour', 'invocations_days', 1],
  ['tool_days', 'day', 'invocations_days', 2],
  ['tool_durations', 'created_at', 'invocations_days', 1],
];

// Metadata only: existing parts are not rewritten.
const TTL_SETTINGS = { materialize_ttl_after_modify: 0 } as const;

async function syncRetention(ch: ClickHouseDoor, params: Record<string, unknown>): Promise<void> {
  for (const [table, column, param, extraDays = 0] of RETENTION) {
    await ch.command(
      `ALTER TABLE {db:Identifier}.{table:Identifier} MODIFY TTL toDateTime({column:Identifier}) + toIntervalDay({${param}:UInt32} + {extra_days:UInt32})`,
      { ...params, table, column, extra_days: extraDays },
      TTL_SETTINGS,
    );
  }
  // task_rows holds rows of three segments; each kind keeps its segment's retention.
  await ch.command(
    `ALTER TABLE {db:Identifier}.task_rows MODIFY TTL toDateTime(ts) + toIntervalDay(multiIf(kind = 'call', {invocations_days:UInt32}, kind = 'output', {outputs_days:UInt32}, {workflows_days:UInt32}))`,
    params,
    TTL_SETTINGS,
  );
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
