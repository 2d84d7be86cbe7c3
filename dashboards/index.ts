/**
 * The tool-audit Grafana dashboards, generated with the foundation SDK. `tool-audit dashboards`
 * writes them as JSON; deploy/grafana provisions that directory.
 */
import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import type { BuiltDashboard, DashboardOptions } from './base.ts';
import type { TargetSource } from './panels.ts';
import { buildCost } from './cost.ts';
import { buildDedup } from './dedup.ts';
import { buildErrors } from './errors.ts';
import { buildOverview } from './overview.ts';
import { buildPipeline } from './pipeline.ts';
import { buildTaskExplorer } from './task-explorer.ts';
import { buildWorkflows } from './workflows.ts';

export type { DashboardOptions } from './base.ts';

/** Default generation settings (the database of docker-compose.yml and platform/config.ts). */
export const DEFAULT_DASHBOARD_OPTIONS: DashboardOptions = { database: 'tool_audit' };

/** Where `tool-audit dashboards` writes, and what compose provisions. */
export const DEFAULT_DASHBOARDS_DIR = 'deploy/grafana/dashboards';

/** One dashboard, its file name, and the QuerySpec behind each target. */
export interface DashboardFile {
  file: string;
  dashboard: dashboard.Dashboard;
  sources: TargetSource[];
}

const BUILDERS: Array<[file: string, build: (o: DashboardOptions) => BuiltDashboard]> = [
  ['overview.json', buildOverview],
  ['cost.json', buildCost],
  ['errors.json', buildErrors],
  ['task-explorer.json', buildTaskExplorer],
  ['dedup.json', buildDedup],
  ['workflows.json', buildWorkflows],
  ['pipeline.json', buildPipeline],
];

/** Builds every dashboard. */
export function buildDashboards(opts: DashboardOptions = DEFAULT_DASHBOARD_OPTIONS): DashboardFile[] {
  return BUILDERS.map(([file, build]) => ({ file, ...build(opts) }));
}

/** The JSON text written for a dashboard (stable: 2-space indent, trailing newline). */
export function dashboardJson(d: dashboard.Dashboard): string {
  return `${JSON.stringify(d, null, 2)}\n`;
}
