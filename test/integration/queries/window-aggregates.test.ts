/**
 * The reads answered from the aggregates of migration 015 (task list, tools table, per-tool
 * series) against an oracle computed in plain JavaScript over the generated calls
 * (test/helpers/window-oracle.ts): calls over several days, inserted in shuffled batches (late and
 * out-of-order across hour edges), many windows with millisecond, hour and day edges; rows stored
 * before the views existed (the migration's backfill); rows deleted by TTL.
 *
 * Costs are multiples of 1/1024, so a sum is exact in any order: the aggregates add partial sums
 * where the scan added calls one by one, and sum() of Float64 (today's statement's too, across
 * threads) depends on the order only in the last bits.
 */
import { describe, expect, it } from 'vitest';
import { createReadQueries, type ReadQueries } from '../../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { migrate } from '../../../platform/clickhouse/migrate.ts';
import { AppError } from '../../../platform/errors.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import { freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { insertCalls, insertWhile, rawCall, rng, type RawCall } from '../../helpers/raw-calls.ts';
import { exactInclusive, seriesOracle, taskListOracle, toolsOracle, windowsOver } from '../../helpers/window-oracle.ts';

const HOUR = 3_600_000;
const STATUSES = ['success', 'success', 'success', 'success', 'timeout', 'error', 'rate_limited', 'invalid_input'] as const;
const AGENTS = ['Coder', 'Planner', 'QA_Agent', 'Writer'];
const TOOLS = ['search_web', 'fetch_url', 'python_execute', 'sql_query', 'image_generate'];

/** Durations of every kind the buckets meet: exact small ones, a long tail, ties, beyond the last bucket. */
function duration(r: () => number): number {
  const u = r();
  if (u < 0.15) return Math.floor(r() * 40);
  if (u < 0.25) return [100, 250, 1000][Math.floor(r() * 3)] as number;
  if (u < 0.3) return 12_000_000 + Math.floor(r() * 9_000_000);
  return Math.floor(Math.exp(r() * Math.log(1_000_000)));
}

/** n calls over `hours` hours from `start`; some exactly on an hour edge or a millisecond before it. */
function generate(seed: number, n: number, start: number, hours: number): RawCall[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)] as T;
  return Array.from({ length: n }, (_, i) => {
    const edge = start + Math.floor(r() * hours) * HOUR;
    const t = i % 17 === 0 ? edge : i % 19 === 0 ? edge - 1 : start + Math.floor(r() * hours * HOUR);
    const status = pick(STATUSES);
    return rawCall({
      task_id: r() < 0.1 ? '' : `task-${String(Math.floor(r() * 60)).padStart(3, '0')}`,
      tool_id: pick(TOOLS),
      agent_id: pick(AGENTS),
      t,
      status,
      duration_ms: duration(r),
      cost_usd: r() < 0.3 ? null : Math.floor(r() * 50_000) / 1024,
    });
  });
}

/** Inserts calls shuffled, in batches of random sizes: late and out-of-order rows across hours. */
async function insertShuffled(ch: ClickHouseClient, db: string, calls: readonly RawCall[], seed: number): Promise<void> {
  const r = rng(seed);
  const order = [...calls].sort(() => r() - 0.5);
  for (let i = 0; i < order.length; ) {
    const size = 1 + Math.floor(r() * order.length * 0.3);
    await insertCalls(ch, db, order.slice(i, i + size));
    i += size;
  }
}

/** Every read of the window against the oracle over `calls`. */
async function expectWindow(q: ReadQueries, calls: readonly RawCall[], from: number, to: number): Promise<void> {
  const window = { fromMs: from, toMs: to };
  const at = `[${new Date(from).toISOString()}, ${new Date(to).toISOString()})`;
  expect((await q.tasks({ window, limit: 1000 })).tasks, `tasks ${at}`).toEqual(taskListOracle(calls, from, to, 1000).tasks);
  expect((await q.tasks({ window, limit: 3 })).tasks, `tasks limit 3 ${at}`).toEqual(taskListOracle(calls, from, to, 3).tasks);
  const tools = (await q.tools({ window, limit: 100 })).tools.map(({ server: _server, ...t }) => t);
  expect(tools, `tools ${at}`).toEqual(toolsOracle(calls, from, to, 100));
  expect((await q.tools({ window, limit: 2 })).tools.map((t) => t.tool_id), `tools limit 2 ${at}`).toEqual(toolsOracle(calls, from, to, 2).map((t) => t.tool_id));
  for (const bucketS of [3600, 7200, 86_400, 900, 5400]) {
    expect(await q.toolSeries({ window, bucketS }), `series ${bucketS} s ${at}`).toEqual(seriesOracle(calls, from, to, bucketS));
  }
}

/** The calls stored now, read back: after TTL, the raw answer is what is left. */
async function storedCalls(ch: ClickHouseClient, db: string): Promise<RawCall[]> {
  const got = await rows<RawCall & { t: string }>(
    ch,
    `SELECT toString(call_id) AS call_id, task_id, toString(tool_id) AS tool_id, toString(agent_id) AS agent_id, toUnixTimestamp64Milli(created_at) AS t,
            toString(status) AS status, duration_ms, cost_usd FROM {db:Identifier}.tool_invocations`,
    { db },
  );
  return got.map((c) => ({ ...c, t: Number(c.t), duration_ms: Number(c.duration_ms), cost_usd: c.cost_usd === null ? null : Number(c.cost_usd), args: {}, args_hash: '' }));
}

const RETENTION = { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 };
const MIGRATIONS = ['015_window_aggregates.sql', '017_window_aggregates_backfill.sql'];

/** Back to before 015's views and aggregates: calls inserted now are seen by no view. */
async function unmigrate015(ch: ClickHouseClient, db: string): Promise<void> {
  for (const v of ['task_hours_mv', 'tool_hours_mv', 'tool_days_mv', 'tool_durations_mv']) await ch.command({ query: 'DROP VIEW {db:Identifier}.{v:Identifier}', query_params: { db, v } });
  for (const t of ['task_hours', 'tool_hours', 'tool_days', 'tool_durations', 'window_aggregates_cutover']) await ch.command({ query: 'DROP TABLE {db:Identifier}.{t:Identifier}', query_params: { db, t } });
  await ch.command({ query: "DELETE FROM {db:Identifier}.schema_migrations WHERE name LIKE '015_%' OR name LIKE '017_%'", query_params: { db } });
}

/** Calls counted by each aggregate. */
async function sums(ch: ClickHouseClient, db: string): Promise<Record<string, number>> {
  const [got] = await rows<Record<string, string>>(
    ch,
    `SELECT (SELECT sum(calls) FROM {db:Identifier}.task_hours) AS tasks, (SELECT sum(calls) FROM {db:Identifier}.tool_hours) AS tools,
            (SELECT sum(calls) FROM {db:Identifier}.tool_days) AS days, (SELECT count() FROM {db:Identifier}.tool_durations) AS durations`,
    { db },
  );
  return Object.fromEntries(Object.entries(got ?? {}).map(([k, v]) => [k, Number(v)]));
}

const expectedSums = (calls: readonly RawCall[]) => ({ tasks: calls.filter((c) => c.task_id !== '').length, tools: calls.length, days: calls.length, durations: calls.length });

// Four days ending at the current hour: within the tests' 90-day retention.
const start = Math.floor(Date.now() / HOUR) * HOUR - 96 * HOUR;

describe('reads from the window aggregates (migration 015)', () => {
  it('equal the oracle for every window, with calls inserted late and out of order', async () => {
    const { ch, db, door } = await freshDatabase('agg');
    const calls = generate(1, 4000, start, 96);
    await insertShuffled(ch, db, calls, 2);
    const q = createReadQueries(door, db, DEFAULT_QUERY_CONTEXT);
    const windows = windowsOver(start, start + 96 * HOUR, calls.map((c) => c.t), 3, 60);
    for (const [from, to] of windows) await expectWindow(q, calls, from, to);
    // The JavaScript p95 is ClickHouse's quantileExactInclusive (the statement the tools table replaced).
    const p95 = await rows<{ tool_id: string; p: number }>(ch, 'SELECT toString(tool_id) AS tool_id, quantileExactInclusive(0.95)(duration_ms) AS p FROM {db:Identifier}.tool_invocations GROUP BY tool_id', { db });
    for (const { tool_id, p } of p95) expect(p).toBe(exactInclusive(calls.filter((c) => c.tool_id === tool_id).map((c) => c.duration_ms).sort((a, b) => a - b), 0.95));
    // Not merged yet and merged: the aggregates read the same.
    for (const t of ['task_hours', 'tool_hours', 'tool_days']) await ch.command({ query: 'OPTIMIZE TABLE {db:Identifier}.{t:Identifier} FINAL', query_params: { db, t } });
    for (const [from, to] of windows.slice(0, 12)) await expectWindow(q, calls, from, to);
  }, 240_000);

  it("counts calls stored before the migration's views exist exactly once (the backfill)", async () => {
    const { ch, db, door } = await freshDatabase('aggb');
    const before = generate(4, 1500, start, 96);
    await insertShuffled(ch, db, before, 5);
    await unmigrate015(ch, db);
    await insertShuffled(ch, db, generate(12, 300, start, 96), 13);
    const early = await storedCalls(ch, db);
    expect((await migrate(door, { retentionDays: RETENTION })).applied).toEqual(MIGRATIONS);
    const after = generate(6, 1500, start, 96);
    await insertShuffled(ch, db, after, 7);
    const calls = [...early, ...after];
    expect(await sums(ch, db)).toEqual(expectedSums(calls));
    const q = createReadQueries(door, db, DEFAULT_QUERY_CONTEXT);
    for (const [from, to] of windowsOver(start, start + 96 * HOUR, calls.map((c) => c.t), 8, 20)) await expectWindow(q, calls, from, to);
  }, 240_000);

  it('count every call once when calls are inserted while the migration runs', async () => {
    // On a loaded machine (the whole suite on 2 cores) the cutover's own insert can land after its
    // 250 ms margin, which the migration refuses by design, naming the recovery (cutover.ts): then
    // the race is run again on a fresh database, at most three times. Any other error fails.
    const race = async () => {
      const fresh = await freshDatabase('aggc');
      await insertShuffled(fresh.ch, fresh.db, generate(14, 1500, start, 96), 15);
      await unmigrate015(fresh.ch, fresh.db);
      // Batches keep arriving between every statement of 015, the cutover and 017's backfill.
      const during = generate(16, 3000, start, 96);
      return { ...fresh, ...(await insertWhile(fresh.ch, fresh.db, during, 200, () => migrate(fresh.door, { retentionDays: RETENTION }))) };
    };
    const late = (e: unknown) => e instanceof AppError && e.code === 'MIGRATION_FAILED' && e.message.includes('cutover was stored late');
    const attempt = async (left: number): Promise<Awaited<ReturnType<typeof race>>> => race().catch((e: unknown) => (left > 1 && late(e) ? attempt(left - 1) : Promise.reject(e)));
    const { ch, db, door, result, batchesBefore } = await attempt(3);
    expect(result.applied).toEqual(MIGRATIONS);
    // Some batches went in before the migration ended, some after: the race happened.
    expect(batchesBefore).toBeGreaterThan(0);
    expect(batchesBefore).toBeLessThan(200);
    const calls = await storedCalls(ch, db);
    expect(calls.length).toBe(4500);
    expect(await sums(ch, db)).toEqual(expectedSums(calls));
    const q = createReadQueries(door, db, DEFAULT_QUERY_CONTEXT);
    for (const [from, to] of windowsOver(start, start + 96 * HOUR, calls.map((c) => c.t), 17, 12)) await expectWindow(q, calls, from, to);
  }, 240_000);

  it('agree with the calls TTL left, the hour TTL cuts into included', async () => {
    const { ch, db, door } = await freshDatabase('aggt');
    const retention = { invocations: 1, outputs: 1, workflows: 1, quarantine: 1 };
    await migrate(door, { retentionDays: retention });
    const calls = generate(9, 3000, start, 96);
    await insertShuffled(ch, db, calls, 10);
    for (const t of ['tool_invocations', 'task_hours', 'tool_hours', 'tool_days']) {
      await ch.command({ query: 'ALTER TABLE {db:Identifier}.{t:Identifier} MATERIALIZE TTL', query_params: { db, t }, clickhouse_settings: { mutations_sync: '2' } });
    }
    const left = await storedCalls(ch, db);
    // TTL deleted the calls older than a day, mid-hour; the aggregates of that hour were kept.
    expect(left.length).toBeGreaterThan(300);
    expect(left.length).toBeLessThan(calls.length / 2);
    const [kept] = await rows<{ n: string }>(ch, 'SELECT count() AS n FROM {db:Identifier}.tool_hours WHERE hour < (SELECT toStartOfHour(min(created_at)) FROM {db:Identifier}.tool_invocations)', { db });
    expect(Number(kept?.n)).toBeGreaterThan(0);
    const q = createReadQueries(door, db, DEFAULT_QUERY_CONTEXT);
    const windows = windowsOver(start, start + 96 * HOUR, left.map((c) => c.t), 11, 30);
    for (const [from, to] of windows) await expectWindow(q, left, from, to);
  }, 240_000);
});
