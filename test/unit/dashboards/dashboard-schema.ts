/**
 * A runtime schema of the dashboard JSON that `tool-audit dashboards` writes, tied to the
 * foundation SDK's TypeScript types at compile time: every key the schema allows is a key of the
 * SDK's type (KeysIn), and what the schema accepts is assignable to that type (Assignable). So
 * parsing a file with it checks the JSON against the SDK's dashboard model, and a key the SDK
 * does not know makes both the typecheck and the parse fail.
 */
import type * as common from '@grafana/grafana-foundation-sdk/common';
import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { z } from 'zod';
import type { ClickHouseQuery } from '../../../dashboards/clickhouse-query.ts';

type KeysIn<S, T> = Exclude<keyof S, keyof T> extends never ? true : { notInSdkType: Exclude<keyof S, keyof T> };
type Assignable<S, T> = S extends T ? true : false;

const DataSourceRef = z.strictObject({ type: z.string().min(1), uid: z.string().min(1) });
const GridPos = z.strictObject({ x: z.number().int().min(0), y: z.number().int().min(0), w: z.number().int().min(1).max(24), h: z.number().int().min(1) });
const Target = z.strictObject({
  refId: z.string().min(1),
  datasource: DataSourceRef,
  editorType: z.literal('sql'),
  queryType: z.enum(['table', 'timeseries']),
  format: z.union([z.literal(0), z.literal(1)]),
  rawSql: z.string().min(1),
});
const Matcher = z.strictObject({ id: z.string(), options: z.unknown().optional() });
const FieldConfigSource = z.strictObject({
  defaults: z.record(z.string(), z.unknown()),
  overrides: z.array(z.strictObject({ matcher: Matcher, properties: z.array(z.strictObject({ id: z.string(), value: z.unknown().optional() })) })),
});
const Transformation = z.strictObject({ id: z.string(), options: z.unknown() });

export const PanelSchema = z.strictObject({
  type: z.enum(['stat', 'timeseries', 'table', 'barchart', 'nodeGraph']),
  id: z.number().int().min(1),
  title: z.string().min(1),
  description: z.string().min(1),
  transparent: z.boolean().optional(),
  repeatDirection: z.enum(['h', 'v']).optional(),
  datasource: DataSourceRef,
  gridPos: GridPos,
  targets: z.array(Target).min(1),
  options: z.record(z.string(), z.unknown()).optional(),
  fieldConfig: FieldConfigSource.optional(),
  transformations: z.array(Transformation).optional(),
});

const VariableOption = z.strictObject({ text: z.string(), value: z.string(), selected: z.boolean().optional() });
export const VariableSchema = z.strictObject({
  type: z.enum(['query', 'custom']),
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
  label: z.string().min(1),
  description: z.string().min(1),
  skipUrlSync: z.boolean().optional(),
  multi: z.literal(false),
  includeAll: z.literal(false),
  allowCustomValue: z.boolean().optional(),
  auto: z.boolean().optional(),
  auto_min: z.string().optional(),
  auto_count: z.number().optional(),
  datasource: DataSourceRef.optional(),
  query: z.union([z.string(), z.strictObject({ refId: z.string(), queryType: z.literal('sql'), editorType: z.literal('sql'), format: z.literal(1), rawSql: z.string().min(1) })]),
  definition: z.string().optional(),
  refresh: z.union([z.literal(1), z.literal(2)]).optional(),
  sort: z.number().int().optional(),
  current: VariableOption,
  options: z.array(VariableOption).min(1),
});

const Annotation = z.strictObject({
  name: z.string(),
  enable: z.boolean(),
  hide: z.boolean(),
  iconColor: z.string(),
  builtIn: z.number(),
  placement: z.literal('inControlsMenu').optional(),
  datasource: DataSourceRef,
  type: z.string(),
});
const Link = z.strictObject({
  title: z.string(),
  type: z.enum(['link', 'dashboards']),
  icon: z.string(),
  tooltip: z.string(),
  tags: z.array(z.string()),
  asDropdown: z.boolean(),
  placement: z.literal('inControlsMenu').optional(),
  targetBlank: z.boolean(),
  includeVars: z.boolean(),
  keepTime: z.boolean(),
});

export const DashboardSchema = z.strictObject({
  uid: z.string().regex(/^[A-Za-z0-9_-]{1,40}$/),
  title: z.string().min(1),
  description: z.string().min(1),
  tags: z.array(z.string()),
  timezone: z.string(),
  editable: z.boolean(),
  graphTooltip: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  fiscalYearStartMonth: z.number().int(),
  schemaVersion: z.number().int().min(36),
  time: z.strictObject({ from: z.string(), to: z.string() }),
  refresh: z.string(),
  timepicker: z.strictObject({ hidden: z.boolean().optional(), refresh_intervals: z.array(z.string()).optional() }),
  templating: z.strictObject({ list: z.array(VariableSchema).optional() }),
  annotations: z.strictObject({ list: z.array(Annotation) }),
  links: z.array(Link),
  panels: z.array(PanelSchema).min(1),
});

// Compile-time ties to the SDK (a failing one is a type error in `tsc --noEmit`).
type Panel = z.infer<typeof PanelSchema>;
type Variable = z.infer<typeof VariableSchema>;
type Dashboard = z.infer<typeof DashboardSchema>;
type Target = z.infer<typeof Target>;
export const sdkTies = {
  dashboardKeys: true satisfies KeysIn<Dashboard, dashboard.Dashboard>,
  dashboardTypes: true satisfies Assignable<Omit<Dashboard, 'panels' | 'templating' | 'annotations' | 'links'>, Omit<dashboard.Dashboard, 'panels' | 'templating' | 'annotations' | 'links'>>,
  panelKeys: true satisfies KeysIn<Panel, dashboard.Panel>,
  panelTypes: true satisfies Assignable<Omit<Panel, 'targets' | 'fieldConfig' | 'transformations'>, Omit<dashboard.Panel, 'targets' | 'fieldConfig' | 'transformations'>>,
  gridPos: true satisfies Assignable<Panel['gridPos'], dashboard.GridPos>,
  datasource: true satisfies Assignable<Panel['datasource'], common.DataSourceRef>,
  fieldConfigKeys: true satisfies KeysIn<NonNullable<Panel['fieldConfig']>, dashboard.FieldConfigSource>,
  transformationKeys: true satisfies KeysIn<NonNullable<Panel['transformations']>[number], dashboard.DataTransformerConfig>,
  variableKeys: true satisfies KeysIn<Variable, dashboard.VariableModel>,
  variableCurrent: true satisfies Assignable<Variable['current'], dashboard.VariableOption>,
  annotationKeys: true satisfies KeysIn<NonNullable<Dashboard['annotations']['list']>[number], dashboard.AnnotationQuery>,
  linkKeys: true satisfies KeysIn<Dashboard['links'][number], dashboard.DashboardLink>,
  targetKeys: true satisfies KeysIn<Target, ClickHouseQuery>,
  targetTypes: true satisfies Assignable<Target, Omit<ClickHouseQuery, '_implementsDataqueryVariant'>>,
};
