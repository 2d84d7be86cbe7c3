/**
 * ClickHouse reads and writes of the analyzer and auditor: progress watermarks, the calls,
 * dependencies and outputs of a set of tasks, and once-only inserts. The thin I/O layer under
 * the pure logic of pairs.ts, data-flow.ts and audit-rules.ts.
 */
import { hash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { AppError } from '../platform/errors.ts';
import type { OutputTrace } from './data-flow.ts';

/** A call as the analyzer sees it. */
export interface StoredCall {
  call_id: string;
  task_id: string;
  tool_id: string;
  t: number;
  args: string;
}

/** A stored dependency row (key fields). */
export interface StoredPair {
  task_id: string;
  preceding_call_id: string;
  succeeding_call_id: string;
  n: number;
}

const CHUNK = 2000;

/** Runs a query, mapping failures to a retryable AppError. */
export async function select<T>(ch: ClickHouseClient, query: string, params: Record<string, unknown>): Promise<T[]> {
  try {
    const rs = await ch.query({ query, query_params: params, format: 'JSONEachRow' });
    return await rs.json<T>();
  } catch (err) {
    throw new AppError('CLICKHOUSE_QUERY_FAILED', `analyzer query failed: ${(err as Error).message}`, { retryable: true, cause: err });
  }
}

/** Inserts rows with a token derived from their keys, so a retried insert is a no-op. */
export async function insertOnce(ch: ClickHouseClient, db: string, table: string, rows: Array<{ key: string; row: object }>): Promise<void> {
  if (rows.length === 0) return;
  const token = hash('sha256', `${table}\n${rows.map((r) => r.key).sort().join('\n')}`, 'hex');
  try {
    await ch.insert({
      table: `${db}.${table}`,
      values: rows.map((r) => r.row),
      format: 'JSONEachRow',
      // task_rows (a materialized view of tool_workflows) deduplicates a retry on its own.
      clickhouse_settings: { insert_deduplication_token: token, date_time_input_format: 'best_effort', deduplicate_blocks_in_dependent_materialized_views: 1 },
    });
  } catch (err) {
    throw new AppError('CLICKHOUSE_UNAVAILABLE', `insert into ${table} failed: ${(err as Error).message}`, { retryable: true, cause: err });
  }
}

/** The job's watermark (epoch ms of ingested_at), 0 when it never ran. */
export async function readWatermark(ch: ClickHouseClient, db: string, name: string): Promise<number> {
  const [r] = await select<{ ms: string }>(
    ch,
    'SELECT toUnixTimestamp64Milli(max(watermark)) AS ms FROM {db:Identifier}.analyzer_progress WHERE name = {name:String}',
    { db, name },
  );
  return Number(r?.ms ?? 0);
}

/** Records the job's progress. */
export async function writeWatermark(ch: ClickHouseClient, db: string, name: string, ms: number): Promise<void> {
  await insertOnce(ch, db, 'analyzer_progress', [{ key: `${name}@${ms}`, row: { name, watermark: new Date(ms).toISOString() } }]);
}

/** Newest ingested_at of any segment row after `fromMs` (0 when none). */
export async function newestIngested(ch: ClickHouseClient, db: string, fromMs: number): Promise<number> {
  const [r] = await select<{ ms: string }>(
    ch,
    `SELECT toUnixTimestamp64Milli(max(m)) AS ms FROM (
       SELECT max(ingested_at) AS m FROM {db:Identifier}.tool_invocations WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC')
       UNION ALL SELECT max(ingested_at) FROM {db:Identifier}.tool_outputs WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC')
       UNION ALL SELECT max(ingested_at) FROM {db:Identifier}.tool_workflows WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC'))`,
    { db, from: fromMs },
  );
  return Number(r?.ms ?? 0);
}

/** Tasks with invocations or dependencies ingested in (fromMs, toMs]. */
export async function touchedTasks(ch: ClickHouseClient, db: string, fromMs: number, toMs: number): Promise<string[]> {
  const r = await select<{ task_id: string }>(
    ch,
    `SELECT DISTINCT task_id FROM (
       SELECT task_id FROM {db:Identifier}.tool_invocations
       WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC') AND task_id != ''
       UNION ALL
       SELECT task_id FROM {db:Identifier}.tool_workflows
       WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC'))`,
    { db, from: fromMs, to: toMs },
  );
  return r.map((x) => x.task_id);
}

/** Every call of the given tasks (a primary-key range each). */
export async function callsOfTasks(ch: ClickHouseClient, db: string, tasks: string[]): Promise<StoredCall[]> {
  const out: StoredCall[] = [];
  for (let i = 0; i < tasks.length; i += CHUNK) {
    const rows = await select<{ call_id: string; task_id: string; tool_id: string; t: string; args: string }>(
      ch,
      `SELECT toString(call_id) AS call_id, task_id, tool_id, toUnixTimestamp64Milli(created_at) AS t, args
       FROM {db:Identifier}.tool_invocations WHERE task_id IN {tasks:Array(String)}`,
      { db, tasks: tasks.slice(i, i + CHUNK) },
    );
    for (const r of rows) out.push({ ...r, t: Number(r.t) });
  }
  return out;
}

/** Stored dependency pairs of the given tasks, with how many rows each has. */
export async function pairsOfTasks(ch: ClickHouseClient, db: string, tasks: string[]): Promise<StoredPair[]> {
  const out: StoredPair[] = [];
  for (let i = 0; i < tasks.length; i += CHUNK) {
    const rows = await select<{ task_id: string; p: string; s: string; n: string }>(
      ch,
      `SELECT task_id, toString(preceding_call_id) AS p, toString(succeeding_call_id) AS s, count() AS n
       FROM {db:Identifier}.tool_workflows WHERE task_id IN {tasks:Array(String)} GROUP BY task_id, p, s`,
      { db, tasks: tasks.slice(i, i + CHUNK) },
    );
    for (const r of rows) out.push({ task_id: r.task_id, preceding_call_id: r.p, succeeding_call_id: r.s, n: Number(r.n) });
  }
  return out;
}

/** Output samples per call_id, for data_flow detection. */
export async function outputsOfCalls(ch: ClickHouseClient, db: string, callIds: string[]): Promise<Map<string, OutputTrace[]>> {
  const out = new Map<string, OutputTrace[]>();
  for (let i = 0; i < callIds.length; i += CHUNK) {
    // Aliases differ from column names: an alias would shadow call_id in WHERE.
    const rows = await select<{ cid: string; oid: string; ct: string; smp: string }>(
      ch,
      `SELECT toString(call_id) AS cid, toString(output_id) AS oid, toString(content_type) AS ct, ifNull(sample, '') AS smp
       FROM {db:Identifier}.tool_outputs WHERE call_id IN {ids:Array(UUID)}`,
      { db, ids: callIds.slice(i, i + CHUNK) },
    );
    for (const r of rows) {
      const list = out.get(r.cid) ?? [];
      list.push({ output_id: r.oid, content_type: r.ct, sample: r.smp });
      out.set(r.cid, list);
    }
  }
  return out;
}
