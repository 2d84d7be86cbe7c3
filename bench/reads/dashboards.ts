/**
 * `npm run bench:dashboards`: how long each Grafana panel takes on a full database.
 *
 *   npm run bench:dashboards -- [--invocations 10000000] [--tasks 100000] [--days 30] [--data-dir ./.bench-data] [--range 6h,7d,30d] [--runs 3] [--budgets 20] [--only TEXT] [--json FILE]
 *
 * On the history bench:queries builds (or reuses: same data directory and shape; N calls over
 * `--days` days, ending at the start of today), every panel of the shipped dashboards
 * (dashboards/index.ts, the very JSON `tool-audit dashboards` writes) is expanded as Grafana and
 * grafana-clickhouse-datasource expand it (dashboards/grafana-expand.ts) and run on the embedded
 * engine, for each range ending at the history's last call:
 *  - with every variable at its saved default ("All" where a variable allows it), and
 *  - with every query variable at one chosen value: the first its own query lists, a variable
 *    without a query at its default.
 * `--budgets` K budgets are put in force first (a new version of the set only when it differs
 * from the one in force): one for everything, then by agent, by tool, by task and by agent and
 * tool, day and month, so that the spend-vs-limit panel sums real scopes (0: no budget).
 * A panel's time is the median of `--runs` runs of all its targets one after another (Grafana's
 * plugin may run a panel's targets side by side: this is the slower, sequential figure). Prints one
 * table per range, slowest panel first, with each panel's rows; `--only` keeps the panels whose
 * dashboard file or title contains TEXT. Targets of the issue: ≤ 1 s over 30 days, ≤ 300 ms over 7
 * days, task explorer panels ≤ 100 ms.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { buildDashboards, type DashboardFile } from '../../dashboards/index.ts';
import { expandPanelSql, type VariableValue } from '../../dashboards/grafana-expand.ts';
import { createClickHouse, type ClickHouseClient } from '../../platform/clickhouse/client.ts';
import { BENCH_SHAPE_OPTIONS, ensureBenchData } from './queries-data.ts';
import { median } from '../stats.ts';

const { values: args } = parseArgs({
  options: {
    ...BENCH_SHAPE_OPTIONS,
    range: { type: 'string', default: '6h,7d,30d' },
    runs: { type: 'string', default: '3' },
    budgets: { type: 'string', default: '20' },
    only: { type: 'string', default: '' },
    json: { type: 'string' },
  },
});
const DB = 'bench';
const RUNS = Number(args.runs);
if (!(Number.isInteger(RUNS) && RUNS >= 1)) throw new Error(`--runs must be a whole number ≥ 1; got ${args.runs}`);
const BUDGETS = Number(args.budgets);
if (!(Number.isInteger(BUDGETS) && BUDGETS >= 0)) throw new Error(`--budgets must be a whole number ≥ 0; got ${args.budgets}`);
const log = (s: string) => process.stderr.write(`[bench:dashboards] ${s}\n`);

/** A range such as 6h, 7d or 30m in milliseconds. */
function rangeMs(text: string): number {
  const m = /^(\d+)([mhd])$/.exec(text.trim());
  if (!m) throw new Error(`--range: ${text} is not a number of minutes, hours or days (30m, 6h, 7d)`);
  return Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
}

type Panel = { title: string; targets?: Array<{ refId: string; rawSql: string }> };
type Variable = { name: string; type: string; current?: { value?: unknown }; query?: unknown };

/** One panel's figure over one range. */
interface PanelFigure {
  range: string;
  dashboard: string;
  panel: string;
  defaultsMs: number;
  chosenMs: number;
  rows: number;
}

async function run(ch: ClickHouseClient, sql: string): Promise<number> {
  const rs = await ch.query({ query: sql, format: 'JSONEachRow', clickhouse_settings: { max_execution_time: 600 } });
  return (await rs.json()).length;
}

/** Runs a panel's targets `RUNS` times: the median time of all of them, and the rows of the first run. */
async function timePanel(ch: ClickHouseClient, panel: Panel, expand: (sql: string) => string): Promise<{ ms: number; rows: number }> {
  const times: number[] = [];
  let rows = 0;
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    let n = 0;
    for (const t of panel.targets ?? []) n += await run(ch, expand(t.rawSql));
    times.push(performance.now() - t0);
    if (r === 0) rows = n;
  }
  return { ms: median(times), rows };
}

/** Every variable at its saved default, and each query variable at the first value its query lists. */
async function variablesOf(ch: ClickHouseClient, f: DashboardFile, expand: (sql: string, v: Record<string, VariableValue>) => string) {
  const list = (f.dashboard.templating.list ?? []) as Variable[];
  const defaults = Object.fromEntries(list.map((v) => [v.name, (v.current?.value ?? '') as VariableValue]));
  const chosen = { ...defaults };
  for (const v of list) {
    const q = (v.query as { rawSql?: string } | undefined)?.rawSql;
    if (v.type !== 'query' || !q) continue;
    const rs = await ch.query({ query: expand(q, defaults), format: 'JSONEachRow' });
    const first = (await rs.json<{ value: string }>()).find((r) => r.value !== '');
    if (first) chosen[v.name] = first.value;
  }
  return { defaults, chosen };
}

/** `count` budgets over the history's agents, tools and tasks, as a set the API would accept. */
function budgetSet(count: number, names: { agents: string[]; tools: string[]; tasks: string[] }): object[] {
  const scopes: Array<Record<string, string>> = [{}];
  for (let i = 0; scopes.length < count; i++) {
    const pick = (xs: string[]) => xs[i % xs.length] as string;
    scopes.push([{ agent_id: pick(names.agents) }, { tool_id: pick(names.tools) }, { task_id: pick(names.tasks) }, { agent_id: pick(names.agents), tool_id: pick(names.tools) }][i % 4] as Record<string, string>);
  }
  return scopes.slice(0, count).map((scope, i) => ({ budget_id: `bench-${i}`, scope, period: i % 2 ? 'day' : 'month', limit_usd: 1000, mode: 'warn' }));
}

/** Puts `set` in force unless it already is (a new version of the set, as PUT /v1/budgets stores it). */
async function putBudgets(ch: ClickHouseClient, set: object[]): Promise<void> {
  const rs = await ch.query({ query: 'SELECT budgets FROM {db:Identifier}.budget_versions ORDER BY version DESC LIMIT 1', query_params: { db: DB }, format: 'JSONEachRow' });
  const [inForce] = await rs.json<{ budgets: string }>();
  if ((inForce?.budgets ?? '[]') === JSON.stringify(set)) return;
  await ch.insert({ table: `${DB}.budget_versions`, values: [{ version: Date.now(), budgets: JSON.stringify(set), key_id: 'bench' }], format: 'JSONEachRow' });
}

async function main(): Promise<void> {
  const shape = { invocations: Number(args.invocations), tasks: Number(args.tasks), days: Number(args.days) };
  const ranges = args.range.split(',').map((r) => ({ label: r.trim(), ms: rangeMs(r) }));
  const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: DB, dataDir: args['data-dir'] });
  const t0 = Date.now();
  const data = await ensureBenchData(ch, DB, shape, log);
  log(`data ready in ${Math.round((Date.now() - t0) / 1000)} s: ${shape.invocations.toLocaleString('en')} calls, ${data.from} … ${data.to}`);
  await putBudgets(ch, budgetSet(BUDGETS, { agents: data.agents, tools: data.tools, tasks: data.taskIds }));
  const toMs = Date.parse(data.to) + 1;
  if (!Number.isFinite(toMs)) throw new Error(`the history's last call time ${data.to} is not a date`);
  const figures: PanelFigure[] = [];
  for (const range of ranges) {
    const fromMs = toMs - range.ms;
    const expand = (sql: string, variables: Record<string, VariableValue>) => expandPanelSql(sql, { fromMs, toMs, variables });
    for (const f of buildDashboards({ database: DB })) {
      const { defaults, chosen } = await variablesOf(ch, f, expand);
      for (const p of (f.dashboard.panels ?? []) as Panel[]) {
        if (!p.targets?.length || (args.only && !`${f.file} ${p.title}`.includes(args.only))) continue;
        const d = await timePanel(ch, p, (sql) => expand(sql, defaults));
        const c = await timePanel(ch, p, (sql) => expand(sql, chosen));
        figures.push({ range: range.label, dashboard: f.file.replace(/\.json$/, ''), panel: p.title, defaultsMs: d.ms, chosenMs: c.ms, rows: d.rows });
        log(`${range.label} ${f.file} / ${p.title}: ${Math.round(d.ms)} ms (defaults), ${Math.round(c.ms)} ms (chosen)`);
      }
    }
  }
  await ch.close();
  process.stdout.write(report(figures, shape));
  if (args.json) writeFileSync(args.json, JSON.stringify({ shape, runs: RUNS, figures }, null, 2));
}

/** One table per range, slowest panel first. */
function report(figures: PanelFigure[], shape: { invocations: number; days: number }): string {
  const out = [`bench:dashboards — N = ${shape.invocations.toLocaleString('en')} calls over ${shape.days} days, ${BUDGETS} budgets in force; median of ${RUNS} runs per panel`];
  for (const range of [...new Set(figures.map((f) => f.range))]) {
    const rows = figures.filter((f) => f.range === range).sort((a, b) => Math.max(b.defaultsMs, b.chosenMs) - Math.max(a.defaultsMs, a.chosenMs));
    out.push('', `range ${range}:`, '| dashboard | panel | defaults ms | chosen ms | rows |', '|---|---|---|---|---|');
    for (const f of rows) out.push(`| ${f.dashboard} | ${f.panel} | ${Math.round(f.defaultsMs)} | ${Math.round(f.chosenMs)} | ${f.rows} |`);
  }
  return `${out.join('\n')}\n`;
}

await main();
