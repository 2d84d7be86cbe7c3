/**
 * Panel helpers over the foundation SDK's builders: every panel gets the ClickHouse datasource,
 * a unique id, an explicit grid position, and targets whose SQL comes from a QuerySpec through
 * {@link panelSql} (never written here).
 */
import * as barchart from '@grafana/grafana-foundation-sdk/barchart';
import * as common from '@grafana/grafana-foundation-sdk/common';
import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as nodegraph from '@grafana/grafana-foundation-sdk/nodegraph';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import * as table from '@grafana/grafana-foundation-sdk/table';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import type { QuerySpec } from '../queries/sql.ts';
import { CLICKHOUSE_DATASOURCE, ClickHouseQueryBuilder } from './clickhouse-query.ts';
import { panelSql, type PanelBindings, type SqlContext } from './panel-sql.ts';

/** One target of a panel: a spec and how its placeholders are bound. */
export interface TargetDef extends PanelBindings {
  spec: QuerySpec;
  refId?: string;
}

/** Common attributes of a panel. */
export interface PanelDef {
  title: string;
  description: string;
  targets: TargetDef[];
  /** Width (of 24 columns) and height (grid rows). */
  w: number;
  h: number;
}

interface AnyPanelBuilder<B> {
  id(id: number): B;
  gridPos(g: dashboard.GridPos): B;
  title(t: string): B;
  description(d: string): B;
  datasource(d: common.DataSourceRef): B;
  withTarget(t: ClickHouseQueryBuilder): B;
}

/** Where a panel target's SQL came from: its spec and bindings (for tests and tooling). */
export interface TargetSource extends TargetDef {
  panelId: number;
  panelTitle: string;
  refId: string;
  series: boolean;
}

/** Places panels left to right, wrapping to a new row when 24 columns are used, and numbers them. */
export class Layout {
  /** Every target placed so far, with the spec it runs. */
  readonly sources: TargetSource[] = [];
  private x = 0;
  private y = 0;
  private rowH = 0;
  private nextId = 1;

  constructor(private readonly ctx: SqlContext) {}

  /** Gives a builder its id, position, title, description, datasource and targets. */
  place<B extends AnyPanelBuilder<B>>(b: B, def: PanelDef, series: boolean): B {
    if (def.w < 1 || def.w > 24) throw new Error(`panel ${def.title}: width ${def.w} is not in 1..24`);
    if (this.x + def.w > 24) this.newRow();
    b.id(this.nextId++)
      .gridPos({ x: this.x, y: this.y, w: def.w, h: def.h })
      .title(def.title)
      .description(def.description)
      .datasource(CLICKHOUSE_DATASOURCE);
    const panelId = this.nextId - 1;
    def.targets.forEach((t, i) => {
      const refId = t.refId ?? String.fromCharCode(65 + i);
      const q = new ClickHouseQueryBuilder(panelSql(t.spec, this.ctx, t)).refId(refId);
      b.withTarget(series ? q.timeSeries() : q.table());
      this.sources.push({ ...t, panelId, panelTitle: def.title, refId, series });
    });
    this.x += def.w;
    this.rowH = Math.max(this.rowH, def.h);
    return b;
  }

  /** Starts a new row below the tallest panel of the current one. */
  newRow(): void {
    if (this.x === 0) return;
    this.y += this.rowH;
    this.x = 0;
    this.rowH = 0;
  }
}

/** Field override setting a unit. */
export const unitOf = (field: string, unit: string) => ({ matcher: { id: 'byName', options: field }, properties: [{ id: 'unit', value: unit }] });

/** A data link on a table column to the Task explorer for the task in that cell. */
export const taskLink = (field: string) => ({
  matcher: { id: 'byName', options: field },
  properties: [
    {
      id: 'links',
      value: [{ title: 'Open in Task explorer', url: '/d/tool-audit-task/tool-audit-task-explorer?var-task_id=${__value.raw}&${__url_time_range}' }],
    },
  ],
});

/** One tile per listed field of a one-row result, each with its unit and name. */
export function statPanel(layout: Layout, def: PanelDef & { fields: Array<{ field: string; name: string; unit: string }> }): stat.PanelBuilder {
  const b = new stat.PanelBuilder()
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).fields(`/^(${def.fields.map((f) => f.field).join('|')})$/`).values(false))
    .graphMode(common.BigValueGraphMode.None)
    .colorMode(common.BigValueColorMode.Value)
    .textMode(common.BigValueTextMode.ValueAndName)
    .orientation(common.VizOrientation.Auto)
    .noValue('–');
  for (const f of def.fields) {
    b.withOverride({ matcher: { id: 'byName', options: f.field }, properties: [{ id: 'unit', value: f.unit }, { id: 'displayName', value: f.name }] });
  }
  return layout.place(b, def, false);
}

/** A time series: long frames (time, label, value) become one series per label value. */
export function seriesPanel(layout: Layout, def: PanelDef & { unit: string; label?: string; stacked?: boolean; bars?: boolean }): timeseries.PanelBuilder {
  const b = new timeseries.PanelBuilder()
    .unit(def.unit)
    .fillOpacity(def.stacked ? 40 : 10)
    .lineWidth(1)
    .showPoints(common.VisibilityMode.Never)
    .legend(new common.VizLegendOptionsBuilder().displayMode(common.LegendDisplayMode.List).placement(common.LegendPlacement.Bottom).showLegend(true))
    .tooltip(new common.VizTooltipOptionsBuilder().mode(common.TooltipDisplayMode.Multi).sort(common.SortOrder.Descending));
  if (def.stacked) b.stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal));
  if (def.bars) b.drawStyle(common.GraphDrawStyle.Bars);
  if (def.label) b.displayName('${__field.labels.' + def.label + '}');
  return layout.place(b, def, true);
}

/** A table, with per-column units and links. */
export function tablePanel(
  layout: Layout,
  def: PanelDef & { units?: Record<string, string>; hide?: string[]; rename?: Record<string, string>; links?: string[] },
): table.PanelBuilder {
  const b = new table.PanelBuilder().cellHeight(common.TableCellHeight.Sm).filterable(true);
  for (const [field, unit] of Object.entries(def.units ?? {})) b.withOverride(unitOf(field, unit));
  for (const field of def.links ?? []) b.withOverride(taskLink(field));
  if (def.hide?.length || def.rename) {
    b.withTransformation({
      id: 'organize',
      options: { excludeByName: Object.fromEntries((def.hide ?? []).map((f) => [f, true])), renameByName: def.rename ?? {}, indexByName: {} },
    });
  }
  return layout.place(b, def, false);
}

/** Bars of a (label, value) table. */
export function barPanel(layout: Layout, def: PanelDef & { xField: string; unit: string; horizontal?: boolean }): barchart.PanelBuilder {
  const b = new barchart.PanelBuilder()
    .xField(def.xField)
    .orientation(def.horizontal ? common.VizOrientation.Horizontal : common.VizOrientation.Auto)
    .showValue(common.VisibilityMode.Auto)
    .unit(def.unit)
    .legend(new common.VizLegendOptionsBuilder().showLegend(false).displayMode(common.LegendDisplayMode.List).placement(common.LegendPlacement.Bottom));
  return layout.place(b, def, false);
}

/** A Node Graph: target A returns the nodes frame, target B the edges frame. */
export function nodeGraphPanel(layout: Layout, def: PanelDef & { mainStatUnit: string; secondaryStatUnit: string; edgeUnit: string }): nodegraph.PanelBuilder {
  const arcs = [
    new nodegraph.ArcOptionBuilder().field('arc__success').color('green'),
    new nodegraph.ArcOptionBuilder().field('arc__failed').color('red'),
  ];
  const b = new nodegraph.PanelBuilder()
    .nodes(new nodegraph.NodeOptionsBuilder().mainStatUnit(def.mainStatUnit).secondaryStatUnit(def.secondaryStatUnit).arcs(arcs))
    .edges(new nodegraph.EdgeOptionsBuilder().mainStatUnit(def.edgeUnit));
  return layout.place(b, def, false);
}

/** The columns of an invocation row (queries/rows.ts) that tables leave out. */
export const INVOCATION_HIDDEN = ['args_hash', 'result_summary', 'tokens_used', 'instance_id', 'orchestrator'];
/** created_ms of invocation rows shown as a time. */
export const INVOCATION_UNITS = { created_ms: 'dateTimeAsIso', duration_ms: 'ms', cost_usd: 'currencyUSD' };
