/**
 * Turns a {@link QuerySpec} (ClickHouse SQL with `{name:Type}` placeholders, as the API runs it)
 * into the raw SQL of a Grafana panel on grafana-clickhouse-datasource. This is the ONE place
 * where a placeholder meets Grafana, so a panel always runs the API's statement:
 *
 * | placeholder                          | becomes                                                        |
 * |--------------------------------------|----------------------------------------------------------------|
 * | `{db:Identifier}`                    | the database name (a literal identifier)                       |
 * | `{from:DateTime64(3, 'UTC')}`        | `$__fromTime_ms` → plugin: `fromUnixTimestamp64Milli(<ms>)`    |
 * | `{to:DateTime64(3, 'UTC')}`          | `$__toTime_ms`   → plugin: `fromUnixTimestamp64Milli(<ms>)`    |
 * | `{bucket_s:UInt32}`                  | `$__interval_s`  → plugin: the panel interval in seconds (≥ 1) |
 * | `{tool_id:String}`, `{agent_id:String}` | `${tool_id:sqlstring}` … (Grafana quotes and escapes; '' = all) |
 * | `{task_id:String}`                   | the task variable, or when it is empty the latest task in range |
 * | `{call_ids:Array(UUID)}`             | a subquery: the calls of that task in range                    |
 * | `{since:DateTime64(3, 'UTC')}`       | the dedup index's watermark minus its overlap, read in SQL     |
 * | numeric dashboard variables          | `toFloat64(${threshold_usd:sqlstring})` … (typed like the API) |
 * | `{limit:UInt32}`                     | a constant per panel                                           |
 * | cursor placeholders                  | the first page (`has_cursor` false, zero keys)                 |
 *
 * A placeholder without a binding is an error at generation time, never a broken panel.
 */
import { DEDUP_OVERLAP_MS } from '../analyzers/dedup-index.ts';
import type { QuerySpec } from '../queries/sql.ts';

/** A `{name:Type}` placeholder as it appears in a spec's SQL. */
export interface Placeholder {
  name: string;
  type: string;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*):([^{}]+)\}/g;

/** Every placeholder of a statement, in order of appearance (repeats included). */
export function placeholders(sql: string): Placeholder[] {
  return [...sql.matchAll(PLACEHOLDER)].map((m) => ({ name: m[1] ?? '', type: (m[2] ?? '').trim() }));
}

/** Dashboard variables whose value a placeholder of the same name takes. */
export const STRING_VARIABLES = ['tool_id', 'agent_id'] as const;
/** Numeric dashboard variables (typed with the placeholder's type, as the API binds them). */
export const NUMERIC_VARIABLES = ['threshold_usd', 'threshold_ms', 'min_count', 'length'] as const;

/** How one panel binds what the defaults do not. */
export interface PanelBindings {
  /** `{limit:UInt32}` of this panel (default 100, the API's default). */
  limit?: number;
  /** Placeholder name → SQL text, overriding the defaults for this panel. */
  overrides?: Record<string, string>;
}

/** Generation-wide settings. */
export interface SqlContext {
  /** Database of the segments, written literally into the SQL. */
  database: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

/** Grafana's template-variable reference, quoted and escaped by Grafana (`sqlstring` format). */
export const sqlString = (variable: string) => '${' + variable + ':sqlstring}';

/** How many of a range's latest calls the task fallback looks among for a task with dependencies. */
export const LATEST_CALLS = 1000;

/** The task a task-scoped panel shows: the `task_id` variable, else the latest task in range. */
export function taskExpression(db: string): string {
  // The fallback: of the tasks of the range's latest calls, the latest that has dependencies (so
  // the workflow graph has edges), else the latest. ClickHouse evaluates this scalar even when a
  // task is chosen, so it reads only the newest end of the range (the calls' by_created
  // projection, in order) and those tasks' dependencies by primary key: milliseconds however much
  // is stored, where asking every stored dependency's task cost ~0.5 s a panel at 10 M calls.
  const recent = `SELECT task_id, created_at FROM ${db}.tool_invocations
      WHERE created_at >= $__fromTime_ms AND created_at < $__toTime_ms AND task_id != ''
      ORDER BY created_at DESC LIMIT ${LATEST_CALLS}`;
  const latest = `(SELECT task_id FROM (${recent})
      ORDER BY task_id IN (SELECT task_id FROM ${db}.tool_workflows WHERE task_id IN (SELECT task_id FROM (${recent}))) DESC, created_at DESC, task_id DESC
      LIMIT 1)`;
  return `if(${sqlString('task_id')} != '', ${sqlString('task_id')}, ifNull(${latest}, ''))`;
}

function castFor(type: string): string {
  const base = /^([A-Za-z0-9]+)/.exec(type)?.[1];
  switch (base) {
    case 'Float64':
    case 'Float32':
    case 'UInt8':
    case 'UInt16':
    case 'UInt32':
    case 'UInt64':
    case 'Int32':
    case 'Int64':
      return `to${base}`;
    default:
      throw new Error(`no cast for numeric variable of type ${type}`);
  }
}

/** A typed placeholder value for a cursor key of the first page. */
function firstPageKey(p: Placeholder): string | undefined {
  if (/^(U?Int\d+|Float\d+)$/.test(p.type)) return '0';
  if (p.type === 'String') return "''";
  if (p.type === 'UUID') return `toUUID('${ZERO_UUID}')`;
  if (/^DateTime64\(3, 'UTC'\)$/.test(p.type)) return "toDateTime64(0, 3, 'UTC')";
  if (/^Array\(\w+\)$/.test(p.type)) return `CAST([], '${p.type}')`;
  return undefined;
}

/** The default Grafana SQL of a placeholder, or undefined when it has none. */
function defaultBinding(p: Placeholder, ctx: SqlContext, limit: number): string | undefined {
  const db = ctx.database;
  switch (p.name) {
    case 'db':
      return db;
    case 'from':
      return '$__fromTime_ms';
    case 'to':
      return '$__toTime_ms';
    case 'bucket_s':
      return '$__interval_s';
    case 'limit':
      return String(limit);
    case 'has_cursor':
      return 'false';
    case 'task_id':
      return taskExpression(db);
    case 'since':
      // What the API binds after reading the dedup index's state: calls of keys ingested after it
      // come from the table, so a panel is exact whatever the indexer's lag (no index: every call).
      return `((SELECT max(watermark) FROM ${db}.dedup_progress) - toIntervalMillisecond(${DEDUP_OVERLAP_MS}))`;
    case 'call_ids':
      return `(SELECT call_id FROM ${db}.tool_invocations
      WHERE task_id = ${taskExpression(db)} AND created_at >= $__fromTime_ms AND created_at < $__toTime_ms)`;
    default:
      // Cursor keys (c_*) only matter after the first page; has_cursor is false, any value of the type will do.
      if (p.name.startsWith('c_')) return firstPageKey(p);
      if ((STRING_VARIABLES as readonly string[]).includes(p.name)) return sqlString(p.name);
      if ((NUMERIC_VARIABLES as readonly string[]).includes(p.name)) return `${castFor(p.type)}(${sqlString(p.name)})`;
      return undefined;
  }
}

/**
 * The raw SQL of a panel target: the spec's statement with every placeholder bound to a Grafana
 * macro, a dashboard variable or a constant. Throws when a placeholder has no binding.
 */
export function panelSql(spec: Pick<QuerySpec, 'name' | 'sql' | 'settings'>, ctx: SqlContext, bindings: PanelBindings = {}): string {
  if (!IDENTIFIER.test(ctx.database)) throw new Error(`database must be a plain identifier, got ${JSON.stringify(ctx.database)}`);
  const limit = bindings.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`limit must be a positive integer, got ${limit}`);
  const sql = spec.sql.replace(PLACEHOLDER, (_m, name: string, type: string) => {
    const p = { name, type: type.trim() };
    const bound = bindings.overrides?.[name] ?? defaultBinding(p, ctx, limit);
    if (bound === undefined) throw new Error(`query ${spec.name}: no Grafana binding for {${name}:${p.type}}`);
    return bound;
  });
  return sql + settingsOf(spec);
}

/** The spec's own settings (e.g. a projection choice) as the SETTINGS clause the API sends too. */
function settingsOf(spec: Pick<QuerySpec, 'name' | 'settings'>): string {
  const entries = Object.entries(spec.settings ?? {});
  if (entries.length === 0) return '';
  const parts = entries.map(([k, v]) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(k) || !/^[A-Za-z0-9_.]*$/.test(String(v))) throw new Error(`query ${spec.name}: bad setting ${k}`);
    return typeof v === 'number' ? `${k} = ${v}` : `${k} = '${v}'`;
  });
  return `\nSETTINGS ${parts.join(', ')}`;
}

/** Names of the dashboard variables a panel SQL refers to (`$name`, `${name}`, `${name:fmt}`). */
export function referencedVariables(sql: string): string[] {
  const names = new Set<string>();
  for (const m of sql.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::[a-z]+)?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g)) {
    const name = m[1] ?? m[2] ?? '';
    if (!name.startsWith('__')) names.add(name);
  }
  return [...names];
}
