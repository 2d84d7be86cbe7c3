/**
 * Every panel of every dashboard, on real (embedded) ClickHouse over a generated workload: its
 * SQL, expanded the way Grafana and grafana-clickhouse-datasource expand it, runs, returns rows,
 * and returns the columns the panel reads. The same statements run through the API's parameter
 * binding return the very same rows.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDashboards, type DashboardFile } from '../../../dashboards/index.ts';
import { expandPanelSql, grafanaInterval, type VariableValue } from '../../../dashboards/grafana-expand.ts';
import type { TargetSource } from '../../../dashboards/panels.ts';
import { placeholders } from '../../../dashboards/panel-sql.ts';
import { DEDUP_OVERLAP_MS } from '../../../analyzers/dedup-index.ts';
import { chTime } from '../../../queries/sql.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import { freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { generateWorkload, loadWorkload, type Workload } from './workload.ts';

type Row = Record<string, unknown>;

type Panel = NonNullable<DashboardFile['dashboard']['panels']>[number] & {
  type: string;
  title: string;
  id: number;
  targets: Array<{ refId: string; rawSql: string }>;
  options?: Record<string, unknown>;
  fieldConfig?: { defaults: Record<string, unknown>; overrides: Array<{ matcher: { id: string; options: string }; properties: Array<{ id: string; value: unknown }> }> };
  transformations?: Array<{ id: string; options: { excludeByName?: Record<string, boolean>; renameByName?: Record<string, string> } }>;
};

let ch: ClickHouseClient;
let db: string;
let w: Workload;
let dashboards: DashboardFile[];

beforeAll(async () => {
  ({ ch, db } = await freshDatabase('dash'));
  w = generateWorkload();
  await loadWorkload(ch, db, w);
  dashboards = buildDashboards({ database: db });
}, 180_000);

/** The saved default of every variable of a dashboard (what a user sees on opening it). */
function defaults(d: DashboardFile['dashboard']): Record<string, VariableValue> {
  return Object.fromEntries((d.templating.list ?? []).map((v) => [v.name, (v.current?.value ?? '') as VariableValue]));
}

async function runPanelSql(sql: string, variables: Record<string, VariableValue>): Promise<Row[]> {
  const expanded = expandPanelSql(sql, { fromMs: w.fromMs, toMs: w.toMs, variables });
  return rows<Row>(ch, expanded);
}

const panelsOf = (f: DashboardFile) => (f.dashboard.panels ?? []) as Panel[];
const columns = (r: Row[]) => Object.keys(r[0] ?? {});

/** Columns a panel's configuration refers to (overrides, transformations, stat fields, bar x). */
function referencedColumns(p: Panel): string[] {
  const out = new Set<string>();
  for (const o of p.fieldConfig?.overrides ?? []) if (o.matcher.id === 'byName') out.add(o.matcher.options);
  for (const t of p.transformations ?? []) {
    Object.keys(t.options.excludeByName ?? {}).forEach((c) => out.add(c));
    Object.keys(t.options.renameByName ?? {}).forEach((c) => out.add(c));
  }
  const reduce = (p.options?.reduceOptions as { fields?: string } | undefined)?.fields;
  const m = /^\/\^\((.*)\)\$\/$/.exec(reduce ?? '');
  m?.[1]?.split('|').forEach((c) => out.add(c));
  const xField = p.options?.xField as string | undefined;
  if (xField) out.add(xField);
  return [...out];
}

function expectPanelShape(p: Panel, results: Map<string, Row[]>): void {
  const where = `${p.title}`;
  for (const [refId, r] of results) expect(r.length, `${where} (${refId}) returned no rows`).toBeGreaterThan(0);
  const all = new Set([...results.values()].flatMap(columns));
  for (const c of referencedColumns(p)) expect(all.has(c), `${where}: column ${c} that the panel reads is missing`).toBe(true);
  const first = [...results.values()][0] ?? [];
  switch (p.type) {
    case 'timeseries': {
      expect(columns(first), where).toContain('time');
      const numeric = Object.entries(first[0] ?? {}).filter(([k, v]) => k !== 'time' && typeof v === 'number');
      expect(numeric.length, `${where}: a numeric value column`).toBeGreaterThan(0);
      const label = /\$\{__field\.labels\.(\w+)\}/.exec(String(p.fieldConfig?.defaults.displayName ?? ''))?.[1];
      if (label) expect(columns(first), `${where}: label column`).toContain(label);
      break;
    }
    case 'stat':
      expect(first.length, `${where}: one row`).toBe(1);
      break;
    case 'barchart':
      expect(Object.values(first[0] ?? {}).some((v) => typeof v === 'number'), where).toBe(true);
      break;
    case 'nodeGraph': {
      const nodes = results.get('nodes') ?? [];
      const edges = results.get('edges') ?? [];
      for (const c of ['id', 'title', 'mainstat', 'secondarystat', 'arc__success', 'arc__failed']) expect(columns(nodes), `${where} nodes`).toContain(c);
      for (const c of ['id', 'source', 'target', 'mainstat']) expect(columns(edges), `${where} edges`).toContain(c);
      const ids = new Set(nodes.map((n) => n.id));
      expect(ids.size, `${where}: unique node ids`).toBe(nodes.length);
      expect(new Set(edges.map((e) => e.id)).size, `${where}: unique edge ids`).toBe(edges.length);
      for (const e of edges) {
        expect(ids.has(e.source), `${where}: edge source ${String(e.source)} is a node`).toBe(true);
        expect(ids.has(e.target), `${where}: edge target ${String(e.target)} is a node`).toBe(true);
      }
      for (const n of nodes) expect(Number(n.arc__success) + Number(n.arc__failed)).toBeCloseTo(1, 9);
      break;
    }
    default:
      expect(columns(first).length, where).toBeGreaterThan(0);
  }
}

/** A first-page cursor key of a type, as the API binds it. */
function firstPageKey(type: string): unknown {
  if (/^(U?Int\d+|Float\d+)$/.test(type)) return 0;
  if (type === 'UUID') return '00000000-0000-0000-0000-000000000000';
  if (type.startsWith('DateTime64')) return chTime(0);
  if (type.startsWith('Array(')) return [];
  return '';
}

describe('dashboards on embedded ClickHouse over a generated workload', () => {
  it('every panel query runs, returns rows and the columns its panel reads (saved defaults)', async () => {
    let targets = 0;
    for (const f of dashboards) {
      const vars = defaults(f.dashboard);
      for (const p of panelsOf(f)) {
        const results = new Map<string, Row[]>();
        for (const t of p.targets) {
          results.set(t.refId, await runPanelSql(t.rawSql, vars).catch((e: Error) => Promise.reject(new Error(`${f.file} / ${p.title} / ${t.refId}: ${e.message}`))));
          targets++;
        }
        expectPanelShape(p, results);
      }
    }
    expect(targets).toBeGreaterThanOrEqual(40);
  }, 120_000);

  it('variable queries list (value, text) pairs led by the "" option, and the values they list work in every panel', async () => {
    const task = w.tasks[3] as string;
    const chosen: Record<string, VariableValue> = { tool_id: 'fetch_url', agent_id: 'Researcher', task_id: task, threshold_usd: '0.5', min_count: '2', length: '2' };
    for (const f of dashboards) {
      for (const v of f.dashboard.templating.list ?? []) {
        if (v.type !== 'query') continue;
        const r = await runPanelSql((v.query as { rawSql: string }).rawSql, {});
        expect(columns(r), v.name).toEqual(['value', 'text']);
        expect(r[0]?.value, v.name).toBe('');
        expect(r.map((x) => x.value), v.name).toContain(chosen[v.name]);
      }
      for (const p of panelsOf(f)) for (const t of p.targets) await runPanelSql(t.rawSql, { ...defaults(f.dashboard), ...chosen });
    }
  }, 120_000);

  it('filters by the selected tool, agent and task', async () => {
    const panel = (file: string, title: string) => {
      const p = panelsOf(dashboards.find((f) => f.file === file) as DashboardFile).find((x) => x.title === title);
      if (!p) throw new Error(`no panel ${title} in ${file}`);
      return p.targets[0]?.rawSql ?? '';
    };
    const byTool = await runPanelSql(panel('overview.json', 'By tool'), { tool_id: 'fetch_url' });
    expect(byTool.map((r) => r.tool_id)).toEqual(['fetch_url']);
    const byAgent = await runPanelSql(panel('cost.json', 'Top agents by cost'), { agent_id: 'Researcher', tool_id: '' });
    expect(byAgent.map((r) => r.agent_id)).toEqual(['Researcher']);
    const task = w.tasks[5] as string;
    const calls = await runPanelSql(panel('task-explorer.json', 'Calls in order'), { task_id: task });
    expect(calls.length).toBeGreaterThan(0);
    expect(new Set(calls.map((r) => r.task_id))).toEqual(new Set([task]));
    const created = calls.map((r) => Number(r.created_ms));
    expect(created).toEqual([...created].sort((a, b) => a - b));
  });

  it('shows the latest task with dependencies when no task is chosen', async () => {
    const sql = panelsOf(dashboards.find((f) => f.file === 'task-explorer.json') as DashboardFile).find((p) => p.title === 'Workflow DAG')?.targets[1]?.rawSql ?? '';
    const edges = await runPanelSql(sql, { task_id: '' });
    expect(edges.length).toBeGreaterThan(0);
    const [latest] = await rows<{ task_id: string }>(
      ch,
      `SELECT task_id FROM {db:Identifier}.tool_invocations WHERE task_id IN (SELECT task_id FROM {db:Identifier}.tool_workflows) ORDER BY created_at DESC LIMIT 1`,
      { db },
    );
    const [one] = await rows<{ task_id: string }>(ch, 'SELECT task_id FROM {db:Identifier}.tool_workflows WHERE preceding_call_id = toUUID({id:String})', { db, id: String(edges[0]?.source) });
    expect(one?.task_id).toBe(latest?.task_id);
  });

  it('with no task chosen shows, of the tasks of the range\'s latest 1,000 calls, the latest with dependencies', async () => {
    // The oracle: the workload's calls in JS, and the tasks that have a dependency row stored.
    // Every accepted call of the workload (its deliberately broken packets are not JSON, or not calls).
    const parsed = (raw: string) => {
      try {
        return JSON.parse(raw) as { type?: string; invocation?: { call_id?: unknown; task_id?: unknown; created_at?: unknown } };
      } catch {
        return {};
      }
    };
    const stored = new Set((await rows<{ id: string }>(ch, 'SELECT toString(call_id) AS id FROM {db:Identifier}.tool_invocations', { db })).map((r) => r.id));
    const calls = w.packets.map((p) => parsed(p.raw)).flatMap(({ type, invocation: inv }) =>
      type === 'tool_call' && typeof inv?.task_id === 'string' && inv.task_id !== '' && stored.has(String(inv.call_id)) ? [{ task: inv.task_id, ms: Date.parse(String(inv.created_at)) }] : [],
    );
    const withDeps = new Set((await rows<{ t: string }>(ch, 'SELECT DISTINCT task_id AS t FROM {db:Identifier}.tool_workflows', { db })).map((r) => r.t));
    const sql = panelsOf(dashboards.find((f) => f.file === 'task-explorer.json') as DashboardFile).find((p) => p.title === 'Calls in order')?.targets[0]?.rawSql ?? '';
    const checked = new Set<string>();
    for (const toMs of [w.fromMs + 15 * 60_000, w.fromMs + 30 * 60_000, w.fromMs + 45 * 60_000, w.toMs]) {
      const latest = calls
        .filter((c) => c.ms >= w.fromMs && c.ms < toMs)
        .sort((a, b) => b.ms - a.ms || (a.task < b.task ? 1 : -1))
        .slice(0, 1000);
      const expected = (latest.find((c) => withDeps.has(c.task)) ?? latest[0])?.task;
      const got = await rows<Row>(ch, expandPanelSql(sql, { fromMs: w.fromMs, toMs, variables: { task_id: '' } }));
      expect(new Set(got.map((r) => r.task_id)), `range ending ${new Date(toMs).toISOString()}`).toEqual(new Set([expected]));
      checked.add(String(expected));
    }
    expect(checked.size, 'the windows show different tasks').toBeGreaterThan(1);
  });

  it('returns exactly what the API binding of the same QuerySpec returns', async () => {
    const task = w.tasks[2] as string;
    const vars: Record<string, VariableValue> = { tool_id: 'search_web', agent_id: 'QA_Agent', task_id: task, threshold_usd: '1', min_count: '2', length: '3' };
    const intervalS = Math.max(1, Math.floor(grafanaInterval(w.fromMs, w.toMs) / 1000));
    const [ids] = await rows<{ ids: string[] }>(
      ch,
      `SELECT groupArray(toString(call_id)) AS ids FROM {db:Identifier}.tool_invocations WHERE task_id = {t:String} AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}`,
      { db, t: task, from: chTime(w.fromMs), to: chTime(w.toMs) },
    );
    // The dedup index's `since` as the API binds it: the watermark it reads, minus the overlap.
    const [wm] = await rows<{ ms: string }>(ch, 'SELECT toUnixTimestamp64Milli(max(watermark)) AS ms FROM {db:Identifier}.dedup_progress', { db });
    const since = chTime(Number(wm?.ms ?? 0) - DEDUP_OVERLAP_MS);
    const apiParams = (s: TargetSource): Record<string, unknown> => {
      const p: Record<string, unknown> = {};
      for (const { name, type } of placeholders(s.spec.sql)) {
        const override = s.overrides?.[name];
        if (override !== undefined) {
          p[name] = /^'(.*)'$/.exec(override)?.[1] ?? override;
          continue;
        }
        const fixed: Record<string, unknown> = {
          db,
          from: chTime(w.fromMs),
          to: chTime(w.toMs),
          bucket_s: intervalS,
          limit: s.limit ?? 100,
          has_cursor: false,
          call_ids: ids?.ids ?? [],
          threshold_usd: Number(vars.threshold_usd),
          min_count: Number(vars.min_count),
          length: Number(vars.length),
          since,
        };
        p[name] = name in fixed ? fixed[name] : name.startsWith('c_') ? firstPageKey(type) : vars[name];
      }
      return p;
    };
    let compared = 0;
    for (const f of dashboards) {
      for (const s of f.sources) {
        const p = panelsOf(f).find((x) => x.id === s.panelId);
        const t = p?.targets.find((x) => x.refId === s.refId);
        if (!t) throw new Error(`no target ${s.refId} of panel ${s.panelTitle}`);
        const panelRows = await runPanelSql(t.rawSql, { ...defaults(f.dashboard), ...vars });
        const apiRows = await rows<Row>(ch, s.spec.sql, apiParams(s));
        expect(panelRows, `${f.file} / ${s.panelTitle} / ${s.spec.name}`).toEqual(apiRows);
        compared++;
      }
    }
    expect(compared).toBe(dashboards.reduce((n, f) => n + f.sources.length, 0));
    expect(compared).toBeGreaterThanOrEqual(40);
  }, 120_000);
});
