/**
 * `npm run bench:aggregates`: the task list, the tools table and the per-tool series
 * as they read before migration 015 (a scan of the window's calls) and now (whole hours and days
 * from the aggregates, the edges from the calls), on bench:queries' generated database: p50/p95 of
 * each over a few windows, the answers compared, and the aggregates' bytes per call.
 *
 *   npm run bench:aggregates -- [--invocations 1000000] [--tasks N/100] [--days 21] [--data-dir ./.bench-data/aggregates] [--rounds 15]
 */
import { parseArgs } from 'node:util';
import type { ClickHouseClient } from '@clickhouse/client';
import { createClickHouse } from '../../platform/clickhouse/client.ts';
import { TASK_LIST } from '../../queries/task-list.ts';
import { TOOL_SERIES } from '../../queries/tool-series.ts';
import { toolFigures } from '../../queries/tools-summary.ts';
import { chTime, DEFAULT_QUERY_CONTEXT } from '../../queries/sql.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { quantile } from '../stats.ts';
import { ensureBenchData } from './queries-data.ts';

const { values: opt } = parseArgs({
  options: {
    invocations: { type: 'string', default: '1000000' },
    tasks: { type: 'string' },
    days: { type: 'string', default: '21' },
    'data-dir': { type: 'string', default: './.bench-data/aggregates' },
    rounds: { type: 'string', default: '15' },
  },
});
const DB = 'bench';
const WINDOW = `created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}`;

/** The statements before migration 015 (git show 8d7d5b7^:queries/…): the definition of the answers. */
const BEFORE: Record<string, string> = {
  task_list: `SELECT task_id, count() AS calls, countIf(status != 'success') AS failures, sum(ifNull(cost_usd, 0)) AS total_cost_usd,
  arraySort(groupUniqArray(toString(agent_id))) AS agents, toUnixTimestamp64Milli(min(created_at)) AS first_ms, toUnixTimestamp64Milli(max(created_at)) AS last_ms
FROM {db:Identifier}.tool_invocations WHERE ${WINDOW} AND task_id != '' GROUP BY task_id ORDER BY last_ms DESC, task_id LIMIT {limit:UInt32}`,
  tools_summary: `SELECT tool_id, count() AS invocations, countIf(status = 'success') AS successes, avg(duration_ms) AS avg_duration_ms,
  quantileExactInclusive(0.95)(duration_ms) AS p95_duration_ms, sum(ifNull(cost_usd, 0)) AS total_cost_usd
FROM {db:Identifier}.tool_invocations WHERE ${WINDOW} GROUP BY tool_id ORDER BY invocations DESC, tool_id LIMIT {limit:UInt32}`,
  tool_series: `SELECT toString(tool_id) AS tool_id, toUnixTimestamp64Milli(toDateTime64(toStartOfInterval(created_at, toIntervalSecond({bucket_s:UInt32})), 3, 'UTC')) AS time_ms,
  count() AS calls, sum(ifNull(cost_usd, 0)) AS cost_usd
FROM {db:Identifier}.tool_invocations WHERE ${WINDOW} GROUP BY tool_id, time_ms ORDER BY tool_id, time_ms`,
};
type Read = (ch: ClickHouseClient, params: Record<string, unknown>) => Promise<{ ms: number; rows: unknown[] }>;
const statement = (sql: string): Read => (ch, params) => run(ch, sql, params);

/** The tools table is two statements (its figures, then the p95 buckets' durations): timed together. */
const toolsSummaryAfter: Read = async (ch, params) => {
  const t0 = performance.now();
  const window = { fromMs: Date.parse(`${String(params.from).replace(" ", "T")}Z`), toMs: Date.parse(`${String(params.to).replace(" ", "T")}Z`) };
  const { rows, p95 } = await toolFigures(createClickHouseDoor(ch, DB), DB, { window, limit: Number(params.limit) }, DEFAULT_QUERY_CONTEXT);
  const answer = rows.map((r) => ({
    tool_id: r.tool_id, invocations: r.invocations, successes: r.successes, avg_duration_ms: r.avg_duration_ms, p95_duration_ms: p95.get(r.tool_id), total_cost_usd: r.total_cost_usd,
  }));
  return { ms: performance.now() - t0, rows: answer };
};
const AFTER: Record<string, Read> = { task_list: statement(TASK_LIST.sql), tools_summary: toolsSummaryAfter, tool_series: statement(TOOL_SERIES.sql) };

async function run(ch: ClickHouseClient, sql: string, params: Record<string, unknown>): Promise<{ ms: number; rows: unknown[] }> {
  const t0 = performance.now();
  const rs = await ch.query({ query: sql, query_params: { db: DB, ...params }, format: 'JSONEachRow' });
  const rows = await rs.json();
  return { ms: performance.now() - t0, rows };
}

/** Equal up to 1e-9 relative for floats: a sum of partial sums differs from the scan's in the last bits. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}

async function main(): Promise<void> {
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const n = Number(opt.invocations);
  const shape = { invocations: n, tasks: Number(opt.tasks ?? Math.round(n / 100)), days: Number(opt.days) };
  const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: DB, dataDir: opt['data-dir'] as string });
  const data = await ensureBenchData(ch, DB, shape, log);
  const [from, to] = [Date.parse(data.from), Date.parse(data.to)];
  const day = 86_400_000;
  const windows: Array<[string, number, number]> = [
    ['90 d (API default)', to - 90 * day, to + 1],
    ['7 d, ms edges', to - 7 * day - 1_234_567, to - 3_210_987],
    ['1 d, ms edges', from + 5 * day + 777_777, from + 6 * day + 123_456],
  ];
  const out = [`bench:aggregates — ${n.toLocaleString('en')} calls, ${shape.tasks.toLocaleString('en')} tasks, ${shape.days} days (${opt['data-dir']}); ms p50 / p95 of ${opt.rounds} rounds`];
  for (const [label, a, b] of windows) {
    const params = { from: chTime(a), to: chTime(b), limit: 100, bucket_s: 3600 };
    for (const name of Object.keys(BEFORE)) {
      const before: number[] = [];
      const after: number[] = [];
      let equal = true;
      for (let i = 0; i < Number(opt.rounds); i++) {
        const x = await run(ch, BEFORE[name] as string, params);
        const y = await (AFTER[name] as Read)(ch, params);
        before.push(x.ms);
        after.push(y.ms);
        equal &&= same(x.rows, y.rows);
      }
      out.push(`${label.padEnd(20)} ${name.padEnd(14)} before ${quantile(before, 0.5).toFixed(1)} / ${quantile(before, 0.95).toFixed(1)}  after ${quantile(after, 0.5).toFixed(1)} / ${quantile(after, 0.95).toFixed(1)}  ${equal ? 'same answer' : 'ANSWERS DIFFER'}`);
    }
  }
  const sizes = await run(
    ch,
    `SELECT name, sum(bytes) AS bytes, round(bytes / {n:UInt64}, 2) AS per_call FROM (
       SELECT table AS name, bytes_on_disk AS bytes FROM system.parts WHERE database = {db:String} AND active AND table IN ('task_hours', 'tool_hours', 'tool_days', 'tool_durations')
       UNION ALL SELECT concat('tool_invocations.', name), bytes_on_disk FROM system.projection_parts WHERE database = {db:String} AND active AND name = 'by_created'
       UNION ALL SELECT 'tool_invocations.duration_bucket', column_bytes_on_disk FROM system.parts_columns WHERE database = {db:String} AND active AND table = 'tool_invocations' AND column = 'duration_bucket')
     GROUP BY name ORDER BY name`,
    { db: DB, n },
  );
  out.push(...sizes.rows.map((r) => `  ${JSON.stringify(r)}`));
  process.stdout.write(`${out.join('\n')}\n`);
  await ch.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:aggregates failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
