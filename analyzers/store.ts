/**
 * ClickHouse reads and writes of the analyzer and auditor: progress watermarks, the calls,
 * dependencies and outputs of a set of tasks, and once-only inserts. The thin I/O layer under
 * the pure logic of pairs.ts, data-flow.ts and audit-rules.ts.
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { chTime } from '../platform/clickhouse/statement.ts';
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

// Keys per look-up, sent as a key set (`{name:KeySet(String)}`, rendered by the door as one
// format() literal: Array parameters of thousands of values are pathologically slow on chDB).
const CHUNK = 2000;

/** The job's watermark (epoch ms of ingested_at), 0 when it never ran. */
export async function readWatermark(ch: ClickHouseDoor, name: string): Promise<number> {
  const [r] = await ch.select<{ ms: string }>('SELECT toUnixTimestamp64Milli(max(watermark)) AS ms FROM {db:Identifier}.analyzer_progress WHERE name = {name:String}',
    { name },
  );
  return Number(r?.ms ?? 0);
}

/** Records the job's progress. */
export async function writeWatermark(ch: ClickHouseDoor, name: string, ms: number): Promise<void> {
  await ch.insertRows('analyzer_progress', [{ key: `${name}@${ms}`, row: { name, watermark: chTime(ms) } }]);
}

/** Newest ingested_at of any segment row after `fromMs` (0 when none). */
export async function newestIngested(ch: ClickHouseDoor, fromMs: number): Promise<number> {
  const [r] = await ch.select<{ ms: string }>(`SELECT toUnixTimestamp64Milli(max(m)) AS ms FROM (
       SELECT max(ingested_at) AS m FROM {db:Identifier}.tool_invocations WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC')
       UNION ALL SELECT max(ingested_at) FROM {db:Identifier}.tool_outputs WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC')
       UNION ALL SELECT max(ingested_at) FROM {db:Identifier}.tool_workflows WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC'))`,
    { from: fromMs },
  );
  return Number(r?.ms ?? 0);
}

/** The segments whose rows carry ingested_at, as the jobs step through them. */
export type Segment = 'tool_invocations' | 'tool_outputs' | 'tool_workflows';

const RANGE = `ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')`;

/**
 * The end of the next step through (fromMs, toMs]: `toMs`, or earlier so that no segment of
 * `segments` holds more than about `rows` rows ingested in the step, and the step spans at most
 * `maxSpanMs` from its first row. Each look-up is a key range of a projection ordered by
 * ingested_at (migrations 006, 013), however large the backlog. Rows sharing the step's last
 * millisecond all belong to it (a millisecond is not split).
 */
export async function stepEnd(ch: ClickHouseDoor, segments: readonly Segment[], fromMs: number, toMs: number, rows: number, maxSpanMs: number): Promise<number> {
  // The first row of each segment, read in ingested_at order (one granule), not min() over the
  // range: a backlog of millions would be read whole on every step.
  let firstMs = Number.POSITIVE_INFINITY;
  for (const table of segments) {
    const [r] = await ch.select<{ ms: string }>(
      `SELECT toUnixTimestamp64Milli(ingested_at) AS ms FROM {db:Identifier}.{table:Identifier} WHERE ${RANGE} ORDER BY ingested_at LIMIT 1`,
      { table, from: fromMs, to: toMs },
    );
    if (r) firstMs = Math.min(firstMs, Number(r.ms));
  }
  if (firstMs === Number.POSITIVE_INFINITY) return toMs; // nothing ingested in the range
  let end = Math.min(toMs, firstMs + maxSpanMs);
  for (const table of segments) {
    const [r] = await ch.select<{ ms: string }>(
      `SELECT toUnixTimestamp64Milli(ingested_at) AS ms FROM {db:Identifier}.{table:Identifier} WHERE ${RANGE}
       ORDER BY ingested_at LIMIT 1 OFFSET {n:UInt64}`,
      { table, from: fromMs, to: end, n: Math.max(0, rows - 1) },
    );
    if (r) end = Math.min(end, Number(r.ms));
  }
  return end;
}

/** Every call of the given tasks (a primary-key range each). */
export async function callsOfTasks(ch: ClickHouseDoor, tasks: string[]): Promise<StoredCall[]> {
  const out: StoredCall[] = [];
  for (let i = 0; i < tasks.length; i += CHUNK) {
    const rows = await ch.select<{ call_id: string; task_id: string; tool_id: string; t: string; args: string }>(
      `SELECT toString(call_id) AS call_id, task_id, tool_id, toUnixTimestamp64Milli(created_at) AS t, args
       FROM {db:Identifier}.tool_invocations WHERE task_id IN {tasks:KeySet(String)}`,
      { tasks: tasks.slice(i, i + CHUNK) },
    );
    for (const r of rows) out.push({ ...r, t: Number(r.t) });
  }
  return out;
}

/**
 * Stored dependency pairs of the given tasks, with how many rows each has: its emitted rows when
 * it has any (an emitted row supersedes the analyzer's), else its analyzer rows.
 */
export async function pairsOfTasks(ch: ClickHouseDoor, tasks: string[]): Promise<StoredPair[]> {
  const out: StoredPair[] = [];
  for (let i = 0; i < tasks.length; i += CHUNK) {
    const rows = await ch.select<{ task_id: string; p: string; s: string; n: string }>(
      `SELECT task_id, toString(preceding_call_id) AS p, toString(succeeding_call_id) AS s, if(countIf(origin = 'emitted') > 0, countIf(origin = 'emitted'), count()) AS n
       FROM {db:Identifier}.tool_workflows WHERE task_id IN {tasks:KeySet(String)} GROUP BY task_id, p, s`,
      { tasks: tasks.slice(i, i + CHUNK) },
    );
    for (const r of rows) out.push({ task_id: r.task_id, preceding_call_id: r.p, succeeding_call_id: r.s, n: Number(r.n) });
  }
  return out;
}

/** Output samples per call_id, for data_flow detection. */
export async function outputsOfCalls(ch: ClickHouseDoor, callIds: string[]): Promise<Map<string, OutputTrace[]>> {
  const out = new Map<string, OutputTrace[]>();
  for (let i = 0; i < callIds.length; i += CHUNK) {
    // Aliases differ from column names: an alias would shadow call_id in WHERE.
    const rows = await ch.select<{ cid: string; oid: string; ct: string; smp: string }>(
      `SELECT toString(call_id) AS cid, toString(output_id) AS oid, toString(content_type) AS ct, ifNull(sample, '') AS smp
       FROM {db:Identifier}.tool_outputs WHERE call_id IN {ids:KeySet(UUID)}`,
      { ids: callIds.slice(i, i + CHUNK) },
    );
    for (const r of rows) {
      const list = out.get(r.cid) ?? [];
      list.push({ output_id: r.oid, content_type: r.ct, sample: r.smp });
      out.set(r.cid, list);
    }
  }
  return out;
}
