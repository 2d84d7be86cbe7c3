/**
 * What every tool-audit dashboard shares: uid and tags, the default time range, refresh, and a
 * link menu to the other tool-audit dashboards.
 */
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { Layout, type TargetSource } from './panels.ts';
import type { SqlContext } from './panel-sql.ts';

/** Generation settings of the dashboards. */
export type DashboardOptions = SqlContext;

/** Tag shared by every tool-audit dashboard (the link menu lists them by it). */
export const TAG = 'tool-audit';

/** A dashboard builder with the shared settings, and a layout for its panels. */
export function baseDashboard(opts: DashboardOptions, uid: string, title: string, description: string): { builder: dashboard.DashboardBuilder; layout: Layout } {
  const builder = new dashboard.DashboardBuilder(title)
    .uid(uid)
    .description(description)
    .tags([TAG])
    .editable()
    .timezone('browser')
    .time({ from: 'now-6h', to: 'now' })
    .refresh('30s')
    .tooltip(dashboard.DashboardCursorSync.Crosshair)
    .timepicker(new dashboard.TimePickerBuilder().refreshIntervals(['10s', '30s', '1m', '5m', '15m', '1h']))
    .annotation(
      new dashboard.AnnotationQueryBuilder()
        .name('Annotations & Alerts')
        .builtIn(1)
        .datasource({ type: 'grafana', uid: '-- Grafana --' })
        .enable(true)
        .hide(true)
        .iconColor('rgba(0, 211, 255, 1)')
        .type('dashboard'),
    )
    .link(new dashboard.DashboardLinkBuilder('tool-audit').type(dashboard.DashboardLinkType.Dashboards).tags([TAG]).asDropdown(true).keepTime(true).includeVars(false).icon('external link').tooltip('').targetBlank(false));
  return { builder, layout: new Layout(opts) };
}

/** A built dashboard and the spec behind each of its targets. */
export interface BuiltDashboard {
  dashboard: dashboard.Dashboard;
  sources: TargetSource[];
}

/** Builds the dashboard and hands back the sources its layout recorded. */
export function finish(builder: dashboard.DashboardBuilder, layout: Layout): BuiltDashboard {
  return { dashboard: builder.build(), sources: layout.sources };
}
