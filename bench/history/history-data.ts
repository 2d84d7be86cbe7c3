/**
 * The database of `npm run bench:history`: N calls of bench:queries' generator
 * (bench/reads/queries-data.ts), built INSIDE ClickHouse (INSERT … SELECT FROM numbers(), chunked by
 * task, then OPTIMIZE FINAL), with realistic sources and three defects the auditor must find:
 *
 *  (a) I11 — every call with created_at in a window of `i11Share` of the range (several days at the
 *      defaults) was sent by a backfill producer per instance (`http:backfill-<instance>#<n>`) whose
 *      positions run BACKWARDS against created_at: ≈ i11Share × N violations. Every other call comes
 *      from its instance's Kafka partition (`kafka:tool_audit.packets/<p>@<offset>`), offsets rising
 *      with created_at, so none of those break I11;
 *  (b) M2 — the bench manifest (bench/jobs/bench-manifest.ts) gives sql_query an input schema requiring
 *      `q`; the generator's args are `{"page": …, "query": …}`: every sql_query call misses `q`;
 *  (c) I4 — every call in a burst window of `i4Share` of the range failed (status 'error') without
 *      an error message.
 *
 * No analyzer watermark is written (analyzer_progress and dedup_progress stay empty) and no
 * violation is stored: a `serve` started on it must catch up over the whole history, as after a day
 * of `analyze` not running, or a backfill. Runs only in a child process (bench/history/history-db-child.ts):
 * chDB holds one data directory per process.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { readFileSync } from 'node:fs';
import { migrate, splitStatements } from '../../platform/clickhouse/migrate.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { applyManifest } from '../../analyzers/manifest-store.ts';
import { benchManifest } from '../jobs/bench-manifest.ts';
import { freshHistory, insertChunks, INVOCATIONS_SQL, RETENTION, taskKey, waitForMutations } from '../reads/queries-data.ts';

/** Shape of the history; a cached database is reused only for the same shape (and generator). */
export interface HistoryShape {
  invocations: number;
  tasks: number;
  days: number;
  /** Share of the range (and so of N) sent by the backwards backfill producers (defect a). */
  i11Share: number;
  /** Share of the range (and so of N) in the failure burst without error messages (defect c). */
  i4Share: number;
  /**
   * false: no OPTIMIZE … FINAL after the inserts (background merges only): a merge of the largest
   * table needs its size again in free disk, which a 30 M history on this machine does not have.
   */
  optimize?: false;
}

/** What a build records beside the database (base.json), and the run needs. */
export interface HistoryMeta {
  shape: HistoryShape;
  generator: number;
  builtAt: string;
  buildSeconds: number;
  from: string;
  to: string;
  /** Newest ingested_at of the history, epoch ms: a job has caught up once its watermark reaches it. */
  historyEndMs: number;
  /** Violations the defects imply (I11 ≈: calls at the same millisecond do not count). */
  expected: { i11: number; i4: number; m2: number };
  rows: { invocations: number; outputs: number; workflows: number };
  /** Task ids spread over the range, for the task view. */
  taskIds: string[];
}

/** The database `serve` uses by default (CLICKHOUSE_DATABASE, platform/config.ts). */
export const HISTORY_DB = 'tool_audit';

/** Version of this generator on top of bench:queries' (whose own GENERATOR stays unchanged). */
export const HISTORY_GENERATOR = 1;

const INSTANCE = `concat(['websocket', 'kernel', 'gateway', 'scheduler'][1 + sipHash64('o', t) % 4], '-', toString(t % 3))`;
const IN_I11 = `(ts >= toDateTime64({i11_from:DateTime64(3, 'UTC')}, 3, 'UTC') AND ts < toDateTime64({i11_to:DateTime64(3, 'UTC')}, 3, 'UTC'))`;
const IN_I4 = `(ts >= toDateTime64({i4_from:DateTime64(3, 'UTC')}, 3, 'UTC') AND ts < toDateTime64({i4_to:DateTime64(3, 'UTC')}, 3, 'UTC'))`;
// Kafka partition = the instance's number (12 instances); the offset rises with created_at.
const SOURCE = `if(${IN_I11},
     concat('http:backfill-', ${INSTANCE}, '#', toString(toUnixTimestamp64Milli(toDateTime64({i11_to:DateTime64(3, 'UTC')}, 3, 'UTC')) - toUnixTimestamp64Milli(ts))),
     concat('kafka:tool_audit.packets/', toString(sipHash64('o', t) % 4 * 3 + t % 3), '@', toString(toUnixTimestamp64Milli(ts) - toUnixTimestamp64Milli(toDateTime64({base:DateTime64(3, 'UTC')}, 3, 'UTC'))))),
  -- ingested a few seconds after the call`;

/** bench:queries' invocation INSERT with the sources and defects above: a rewrite of exact pieces, each checked. */
function historyInvocationsSql(): string {
  const edits: Array<[string, string]> = [
    ["'bench',\n  -- ingested a few seconds after the call", SOURCE],
    ["multiIf(s < 920, 'success',", `multiIf(${IN_I4}, 'error', s < 920, 'success',`],
    ["multiIf(st = 'success', NULL,", `multiIf(st = 'success' OR ${IN_I4}, NULL,`],
  ];
  let sql = INVOCATIONS_SQL;
  for (const [from, to] of edits) {
    // The generator of bench:queries changed under us: fail loudly rather than build other data.
    if (sql.split(from).length !== 2) throw new Error(`bench/reads/queries-data.ts INVOCATIONS_SQL no longer contains exactly one ${JSON.stringify(from)}`);
    sql = sql.replace(from, to);
  }
  return sql;
}

const chTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

async function one<T>(ch: ClickHouseClient, query: string, db: string): Promise<T> {
  const rs = await ch.query({ query, query_params: { db }, format: 'JSONEachRow' });
  return (await rs.json<T>())[0] as T;
}

/** Drops `db` and builds the history into it; returns its meta (the caller stores it). */
export async function buildHistory(ch: ClickHouseClient, db: string, shape: HistoryShape, log: (s: string) => void): Promise<HistoryMeta> {
  const t0 = Date.now();
  // Ends at the start of today (UTC), as bench:queries' data: within retention, and ≥ the auditor's grace ago.
  const { perTask, spanMs, baseMs } = await freshHistory(ch, db, shape);
  // The backfill in the middle of the range, the burst at a quarter: apart, so each defect counts alone.
  const i11From = baseMs + Math.round(spanMs * 0.5);
  const i4From = baseMs + Math.round(spanMs * 0.25);
  const params = {
    db,
    per_task: perTask,
    span_ms: spanMs,
    base: chTime(baseMs),
    i11_from: chTime(i11From),
    i11_to: chTime(i11From + Math.round(spanMs * shape.i11Share)),
    i4_from: chTime(i4From),
    i4_to: chTime(i4From + Math.round(spanMs * shape.i4Share)),
  };
  await insertChunks(ch, shape, historyInvocationsSql(), params, log, t0);
  log(`  inserted in ${Math.round((Date.now() - t0) / 1000)} s${shape.optimize === false ? ' (no OPTIMIZE: background merges only)' : '; merging parts (OPTIMIZE … FINAL)'}`);
  // A long-running table is mostly merged: start `serve` on that steady state, not on fresh parts.
  for (const table of shape.optimize === false ? [] : ['tool_invocations', 'tool_outputs', 'tool_workflows', 'task_rows']) {
    await ch.command({ query: 'OPTIMIZE TABLE {db:Identifier}.{t:Identifier} FINAL', query_params: { db, t: table } });
  }
  await waitForMutations(ch, db, log);
  const range = await one<{ from: string; to: string; end: string }>(
    ch,
    'SELECT toString(min(created_at)) AS from, toString(max(created_at)) AS to, toString(toUnixTimestamp64Milli(max(ingested_at))) AS end FROM {db:Identifier}.tool_invocations',
    db,
  );
  // The manifest in force since the first call: the manifest rules audit the whole history.
  await applyManifest(createClickHouseDoor(ch, db), benchManifest(), Date.parse(`${range.from.replace(' ', 'T')}Z`));
  const exp = await one<{ i11: string; i4: string; m2: string }>(
    ch,
    `SELECT countIf(startsWith(source, 'http:backfill-')) - uniqExactIf(instance_id, startsWith(source, 'http:backfill-')) AS i11,
            countIf(status != 'success' AND error IS NULL) AS i4, countIf(tool_id = 'sql_query') AS m2
     FROM {db:Identifier}.tool_invocations`,
    db,
  );
  const rows = await countRows(ch, db);
  // Catching up is the point: nothing may say the history was analyzed already.
  const progress = await one<{ n: string }>(ch, 'SELECT (SELECT count() FROM {db:Identifier}.analyzer_progress) + (SELECT count() FROM {db:Identifier}.dedup_progress) + (SELECT count() FROM {db:Identifier}.violations) AS n', db);
  if (Number(progress.n) !== 0) throw new Error('a fresh history holds watermarks or violations');
  const taskIds = Array.from({ length: 50 }, (_, k) => taskKey(Math.floor(((k * 7919) % 50) * (shape.tasks / 50))));
  return {
    shape,
    generator: HISTORY_GENERATOR,
    builtAt: new Date().toISOString(),
    buildSeconds: (Date.now() - t0) / 1000,
    from: `${range.from.replace(' ', 'T')}Z`,
    to: `${range.to.replace(' ', 'T')}Z`,
    historyEndMs: Number(range.end),
    expected: { i11: Number(exp.i11), i4: Number(exp.i4), m2: Number(exp.m2) },
    rows,
    taskIds,
  };
}

async function countRows(ch: ClickHouseClient, db: string): Promise<HistoryMeta['rows']> {
  const r = await one<Record<string, string>>(
    ch,
    `SELECT (SELECT count() FROM {db:Identifier}.tool_invocations) AS invocations, (SELECT count() FROM {db:Identifier}.tool_outputs) AS outputs,
            (SELECT count() FROM {db:Identifier}.tool_workflows) AS workflows`,
    db,
  );
  return { invocations: Number(r.invocations), outputs: Number(r.outputs), workflows: Number(r.workflows) };
}

/** What a run left in its data directory: the jobs' watermark writes and the violations found. */
export interface RunState {
  /** Every watermark write: job name, watermark and wall time of the write (epoch ms). */
  progress: Array<{ name: string; watermarkMs: number; updatedMs: number }>;
  violations: Record<string, number>;
  rows: HistoryMeta['rows'];
}

/** Reads a stopped run's data directory. */
export async function inspectRun(ch: ClickHouseClient, db: string): Promise<RunState> {
  const rs = await ch.query({
    query: `SELECT name, toString(toUnixTimestamp64Milli(watermark)) AS w, toString(toUnixTimestamp64Milli(updated_at)) AS u FROM {db:Identifier}.analyzer_progress
            UNION ALL SELECT 'dedup-index' AS name, toString(toUnixTimestamp64Milli(watermark)) AS w, toString(toUnixTimestamp64Milli(updated_at)) AS u FROM {db:Identifier}.dedup_progress
            ORDER BY u`,
    query_params: { db },
    format: 'JSONEachRow',
  });
  const progress = (await rs.json<{ name: string; w: string; u: string }>()).map((r) => ({ name: r.name, watermarkMs: Number(r.w), updatedMs: Number(r.u) }));
  const vs = await ch.query({ query: 'SELECT invariant, count() AS n FROM {db:Identifier}.violations GROUP BY invariant ORDER BY invariant', query_params: { db }, format: 'JSONEachRow' });
  const violations = Object.fromEntries((await vs.json<{ invariant: string; n: string }>()).map((r) => [r.invariant, Number(r.n)]));
  return { progress, violations, rows: await countRows(ch, db) };
}

/** Brings a reused history up to the current schema (new migrations, e.g. projections) and waits for their mutations. */
export async function migrateHistory(ch: ClickHouseClient, db: string, log: (s: string) => void): Promise<{ applied: string[] }> {
  const door = createClickHouseDoor(ch, db);
  const r = await migrate(door, { retentionDays: RETENTION });
  await waitForMutations(ch, db, log);
  // A history built by this bench before its cutover fix (queries-data.ts: freshHistory) has
  // calls with ingested_at before the window aggregates' cutover that no view counted: count
  // them as migration 017 counts such calls.
  const [agg] = await door.select<{ calls: string; counted: string }>(
    'SELECT (SELECT count() FROM {db:Identifier}.tool_invocations) AS calls, (SELECT count() FROM {db:Identifier}.tool_durations) AS counted',
  );
  if (Number(agg?.calls) > 0 && Number(agg?.counted) === 0) {
    const t0 = performance.now();
    const sql = readFileSync(new URL('../../platform/clickhouse/migrations/017_window_aggregates_backfill.sql', import.meta.url), 'utf8');
    for (const statement of splitStatements(sql)) await door.command(statement);
    log(`  counted the history into the window aggregates (no view had) in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    r.applied.push('017 again (window aggregates were empty)');
  }
  return { applied: r.applied };
}

