/**
 * What Grafana and grafana-clickhouse-datasource do to a panel's raw SQL before ClickHouse sees
 * it, so tests (and `tool-audit dashboards --expand`) can run panel SQL on a real ClickHouse:
 *
 * 1. Grafana (frontend, templateSrv) replaces dashboard variables: `$name`, `${name}`,
 *    `${name:format}`. `sqlstring` quotes each value with `'` and doubles inner quotes, joining
 *    several values with `,`; no format gives the raw value (an array becomes `'a','b'`, the
 *    datasource's own formatter). Unknown names (e.g. `$__fromTime_ms`) are left as they are.
 * 2. The plugin's backend (sqlds; pkg/macros/macros.go of grafana/clickhouse-datasource) expands
 *    its macros, matched as `\$__name\b` with a balanced `(args)` list:
 *    - `$__fromTime` / `$__toTime`        → `toDateTime(<unix seconds>)`
 *    - `$__fromTime_ms` / `$__toTime_ms`  → `fromUnixTimestamp64Milli(<unix ms>)`
 *    - `$__timeFilter(c)`                 → `c >= toDateTime(<s>) AND c <= toDateTime(<s>)`
 *    - `$__timeFilter_ms(c)`              → same with `fromUnixTimestamp64Milli(<ms>)`
 *    - `$__dateFilter(c)`                 → `c >= toDate('YYYY-MM-DD') AND c <= toDate('…')`
 *    - `$__timeInterval(c)`               → `toStartOfInterval(toDateTime(c), INTERVAL <n> second)`
 *    - `$__timeInterval_ms(c)`            → `toStartOfInterval(toDateTime64(c, 3), INTERVAL <n> millisecond)`
 *    - `$__interval_s`                    → `<n>`: the panel interval in whole seconds, at least 1
 * The panel interval is Grafana's: (to − from) / maxDataPoints rounded to a "nice" step.
 */

/** A value of a dashboard variable: one string, or several for a multi-value variable. */
export type VariableValue = string | string[];

/** The time range and variables of one panel refresh. */
export interface ExpandOptions {
  fromMs: number;
  toMs: number;
  /** Panel interval; defaults to {@link grafanaInterval} of the range. */
  intervalMs?: number;
  variables: Record<string, VariableValue>;
}

const sqlQuote = (v: string) => `'${v.replace(/'/g, "''")}'`;

function formatValue(value: VariableValue, format: string | undefined): string {
  const values = Array.isArray(value) ? value : [value];
  switch (format) {
    case 'sqlstring':
    case 'singlequote':
      return values.map(sqlQuote).join(',');
    case 'csv':
      return values.join(',');
    case 'raw':
    case 'text':
      return values.join(',');
    case undefined:
      // grafana-clickhouse-datasource's formatter: arrays quoted and comma-joined, else raw.
      return Array.isArray(value) ? `'${value.join("','")}'` : value;
    default:
      throw new Error(`variable format ${format} is not emulated`);
  }
}

/** Step 1: Grafana's template variable replacement. */
export function expandVariables(sql: string, variables: Record<string, VariableValue>): string {
  return sql.replace(/\$(\w+)|\$\{(\w+)(?::([^}]+))?\}/g, (match, plain: string | undefined, braced: string | undefined, format: string | undefined) => {
    const name = plain ?? braced ?? '';
    const value = variables[name];
    if (value === undefined) return match;
    return formatValue(value, format);
  });
}

const NICE_STEPS_MS = [
  1, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 20_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_200_000,
  1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000, 604_800_000, 2_592_000_000,
];

/** Grafana's auto interval for a range: range / maxDataPoints, rounded up to a nice step. */
export function grafanaInterval(fromMs: number, toMs: number, maxDataPoints = 1000): number {
  const raw = Math.max(1, (toMs - fromMs) / maxDataPoints);
  return NICE_STEPS_MS.find((s) => s >= raw) ?? raw;
}

/** Balanced `(…)` argument list at the start of `s`: its arguments and length, or null. */
function parseArgs(s: string): { args: string[]; length: number } | null {
  if (!s.startsWith('(')) return { args: [], length: 0 };
  let depth = 0;
  let current = '';
  const args: string[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '(') {
      depth++;
      if (depth === 1) continue;
    } else if (c === ')') {
      depth--;
      if (depth === 0) {
        args.push(current.trim());
        return { args: args.filter((a, k) => a !== '' || k > 0), length: i + 1 };
      }
    } else if (c === ',' && depth === 1) {
      args.push(current.trim());
      current = '';
      continue;
    }
    current += c;
  }
  return null;
}

type Macro = (args: string[]) => string;

function macros(o: Required<Pick<ExpandOptions, 'fromMs' | 'toMs' | 'intervalMs'>>): Record<string, Macro> {
  const s = (ms: number) => `toDateTime(${Math.floor(ms / 1000)})`;
  const ms = (v: number) => `fromUnixTimestamp64Milli(${Math.floor(v)})`;
  const day = (v: number) => `toDate('${new Date(v).toISOString().slice(0, 10)}')`;
  const one = (name: string, args: string[]) => {
    if (args.length !== 1) throw new Error(`$__${name} expects 1 argument, got ${args.length}`);
    return args[0] as string;
  };
  const seconds = Math.max(1, Math.floor(o.intervalMs / 1000));
  return {
    fromTime: () => s(o.fromMs),
    toTime: () => s(o.toMs),
    fromTime_ms: () => ms(o.fromMs),
    toTime_ms: () => ms(o.toMs),
    timeFilter: (a) => `${one('timeFilter', a)} >= ${s(o.fromMs)} AND ${one('timeFilter', a)} <= ${s(o.toMs)}`,
    timeFilter_ms: (a) => `${one('timeFilter_ms', a)} >= ${ms(o.fromMs)} AND ${one('timeFilter_ms', a)} <= ${ms(o.toMs)}`,
    dateFilter: (a) => `${one('dateFilter', a)} >= ${day(o.fromMs)} AND ${one('dateFilter', a)} <= ${day(o.toMs)}`,
    timeInterval: (a) => `toStartOfInterval(toDateTime(${one('timeInterval', a)}), INTERVAL ${seconds} second)`,
    timeInterval_ms: (a) => `toStartOfInterval(toDateTime64(${one('timeInterval_ms', a)}, 3), INTERVAL ${Math.max(1, Math.floor(o.intervalMs))} millisecond)`,
    interval_s: () => String(seconds),
  };
}

/** Step 2: the datasource's macros. */
export function expandMacros(sql: string, o: Pick<ExpandOptions, 'fromMs' | 'toMs' | 'intervalMs'>): string {
  const table = macros({ fromMs: o.fromMs, toMs: o.toMs, intervalMs: o.intervalMs ?? grafanaInterval(o.fromMs, o.toMs) });
  let out = sql;
  for (const [name, fn] of Object.entries(table)) {
    const rx = new RegExp(`\\$__${name}\\b`, 'g');
    let m: RegExpExecArray | null;
    while ((m = rx.exec(out)) !== null) {
      const parsed = parseArgs(out.slice(m.index + m[0].length));
      if (parsed === null) throw new Error(`$__${name}: missing closing bracket`);
      const replacement = fn(parsed.args);
      out = out.slice(0, m.index) + replacement + out.slice(m.index + m[0].length + parsed.length);
      rx.lastIndex = m.index + replacement.length;
    }
  }
  const left = /\$__\w+/.exec(out);
  if (left) throw new Error(`macro ${left[0]} is not one grafana-clickhouse-datasource expands`);
  return out;
}

/** Both steps: the SQL ClickHouse receives from a panel. */
export function expandPanelSql(sql: string, o: ExpandOptions): string {
  return expandMacros(expandVariables(sql, o.variables), o);
}
