import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CLICKHOUSE_DATASOURCE, CLICKHOUSE_PLUGIN_ID, QueryFormat } from '../../../dashboards/clickhouse-query.ts';
import { buildDashboards, dashboardJson, DEFAULT_DASHBOARDS_DIR } from '../../../dashboards/index.ts';
import { referencedVariables } from '../../../dashboards/panel-sql.ts';
import { DashboardSchema } from './dashboard-schema.ts';

const root = new URL('../../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const files = buildDashboards();
/** The macros grafana-clickhouse-datasource expands (pkg/macros/macros.go). */
const PLUGIN_MACROS = new Set(['fromTime', 'toTime', 'fromTime_ms', 'toTime_ms', 'timeFilter', 'timeFilter_ms', 'dateFilter', 'dateTimeFilter', 'dt', 'timeInterval', 'timeInterval_ms', 'interval_s']);

describe('generated dashboards', () => {
  it('are checked in and up to date (run `tool-audit dashboards`)', () => {
    const onDisk = readdirSync(new URL(`${DEFAULT_DASHBOARDS_DIR}/`, root)).filter((f) => f.endsWith('.json')).sort();
    expect(onDisk).toEqual(files.map((f) => f.file).sort());
    for (const f of files) expect(read(`${DEFAULT_DASHBOARDS_DIR}/${f.file}`), f.file).toBe(dashboardJson(f.dashboard));
  });

  it('are the seven dashboards of the issue, with unique uids', () => {
    const titles = files.map((f) => f.dashboard.title);
    expect(titles).toEqual([
      'tool-audit · Overview',
      'tool-audit · Cost',
      'tool-audit · Errors',
      'tool-audit · Task explorer',
      'tool-audit · Dedup & cache',
      'tool-audit · Workflows',
      'tool-audit · Pipeline health',
    ]);
    expect(new Set(files.map((f) => f.dashboard.uid)).size).toBe(files.length);
  });

  for (const { file } of files) {
    describe(file, () => {
      const json: unknown = JSON.parse(read(`${DEFAULT_DASHBOARDS_DIR}/${file}`));

      it('matches the SDK dashboard model (schema tied to @grafana/grafana-foundation-sdk types)', () => {
        const r = DashboardSchema.safeParse(json);
        expect(r.success ? [] : r.error.issues).toEqual([]);
      });

      const d = DashboardSchema.parse(json);
      const variables = new Set((d.templating.list ?? []).map((v) => v.name));

      it('has panels with unique ids inside the 24-column grid, none overlapping', () => {
        expect(new Set(d.panels.map((p) => p.id)).size).toBe(d.panels.length);
        const cells = new Set<string>();
        for (const p of d.panels) {
          const g = p.gridPos;
          expect(g.x + g.w, p.title).toBeLessThanOrEqual(24);
          for (let x = g.x; x < g.x + g.w; x++) {
            for (let y = g.y; y < g.y + g.h; y++) {
              const cell = `${x},${y}`;
              expect(cells.has(cell), `${p.title} overlaps at ${cell}`).toBe(false);
              cells.add(cell);
            }
          }
        }
      });

      it('runs every target as raw SQL on the ClickHouse datasource', () => {
        for (const p of d.panels) {
          expect(p.datasource, p.title).toEqual(CLICKHOUSE_DATASOURCE);
          expect(new Set(p.targets.map((t) => t.refId)).size, p.title).toBe(p.targets.length);
          for (const t of p.targets) {
            expect(t.datasource).toEqual(CLICKHOUSE_DATASOURCE);
            expect(t.editorType).toBe('sql');
            expect(t.format, p.title).toBe(p.type === 'timeseries' ? QueryFormat.TimeSeries : QueryFormat.Table);
            expect(t.queryType).toBe(p.type === 'timeseries' ? 'timeseries' : 'table');
          }
        }
        expect(d.panels.filter((p) => p.type === 'nodeGraph').every((p) => p.targets.length === 2)).toBe(true);
      });

      it('leaves no query parameter unbound and uses only the datasource macros and its own variables', () => {
        const sqls = [...d.panels.flatMap((p) => p.targets.map((t) => ({ where: p.title, sql: t.rawSql }))), ...(d.templating.list ?? []).flatMap((v) => (typeof v.query === 'string' ? [] : [{ where: `variable ${v.name}`, sql: v.query.rawSql }]))];
        for (const { where, sql } of sqls) {
          expect(sql.match(/(?<!\$)\{[A-Za-z_]\w*:[^}]+\}/g), where).toBeNull();
          for (const m of sql.matchAll(/\$__(\w+)/g)) expect(PLUGIN_MACROS.has(m[1] ?? ''), `${where}: $__${m[1]}`).toBe(true);
          for (const v of referencedVariables(sql)) expect(variables.has(v), `${where} refers to $${v}`).toBe(true);
          expect(sql, where).not.toMatch(/\{db:|\btool_audit_test\b/);
          expect(sql, where).toMatch(/\btool_audit\./);
        }
      });

      it('saves variable defaults that select everything (pickers: the "" option)', () => {
        for (const v of d.templating.list ?? []) {
          expect(v.options.some((o) => o.value === v.current.value), v.name).toBe(true);
          if (v.type === 'query') expect(v.current.value).toBe('');
        }
      });
    });
  }
});

describe('Grafana provisioning', () => {
  it('provisions the datasource every panel uses, as the read-only user', () => {
    const ds = parse(read('deploy/grafana/provisioning/datasources/clickhouse.yaml')) as { datasources: Array<Record<string, unknown>> };
    const [source] = ds.datasources;
    expect(source).toMatchObject({ type: CLICKHOUSE_PLUGIN_ID, uid: CLICKHOUSE_DATASOURCE.uid, jsonData: { host: 'clickhouse', port: 8123, protocol: 'http', username: 'tool_audit_reader', defaultDatabase: 'tool_audit' } });
    expect(source?.secureJsonData).toEqual({ password: '$CLICKHOUSE_READER_PASSWORD' });
  });

  it('provisions the dashboards directory compose mounts', () => {
    const p = parse(read('deploy/grafana/provisioning/dashboards/tool-audit.yaml')) as { providers: Array<{ type: string; options: { path: string } }> };
    const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, { volumes?: string[]; environment?: Record<string, string> }> };
    const grafana = compose.services.grafana;
    expect(grafana?.volumes).toContain(`./${DEFAULT_DASHBOARDS_DIR}:${p.providers[0]?.options.path}:ro`);
    expect(grafana?.volumes).toContain('./deploy/grafana/provisioning:/etc/grafana/provisioning:ro');
    expect(grafana?.environment?.GF_INSTALL_PLUGINS).toMatch(new RegExp(`^${CLICKHOUSE_PLUGIN_ID} \\d+\\.\\d+\\.\\d+$`));
  });
});
