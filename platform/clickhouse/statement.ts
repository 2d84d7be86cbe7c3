/**
 * What a ClickHouse statement is, apart from running it: a parameterised SQL text with its
 * settings, the limits a read runs under, and the one text format of a ClickHouse time. Pure:
 * query specs (queries/), panel builders (dashboards/) and the door (door.ts) all use it.
 */
import type { MetricsRegistry } from '../metrics.ts';

/** A parameterised statement as published for the API, the CLI and Grafana panels. */
export interface QuerySpec {
  /** Stable name, also the `query` label of the query metrics. */
  name: string;
  /** What it answers, in one sentence. */
  description: string;
  /** ClickHouse SQL with `{name:Type}` placeholders; the database is `{db:Identifier}`. */
  sql: string;
  /** Placeholder name → its meaning (type is in the SQL). */
  params: Record<string, string>;
  /**
   * ClickHouse settings the statement needs to run well (e.g. which projection to prefer). The
   * result is the same without them; a Grafana panel may append them as a SETTINGS clause.
   */
  settings?: Record<string, string | number>;
}

/** Limits ClickHouse enforces on every read query (sent in the statement's SETTINGS clause). */
export interface QueryLimits {
  /** `max_execution_time`, seconds. */
  maxExecutionSeconds: number;
  /** `max_result_rows` with `result_overflow_mode = 'throw'`. */
  maxResultRows: number;
}

/** How a read statement runs: its limits and where its latency is recorded. */
export interface ReadLimits {
  limits: QueryLimits;
  metrics?: MetricsRegistry;
}

const SETTING_NAME = /^[a-z_][a-z0-9_]*$/;
const SETTING_VALUE = /^[A-Za-z0-9_.]*$/;

/**
 * The SETTINGS clause of a read query: its own settings, then the limits. Built from constants
 * of the code and validated configuration integers, never from request data. Per-query SETTINGS
 * rather than clickhouse_settings: the embedded engine applies the latter as session-wide SETs,
 * which would leak into the ingest pipeline's queries on the same session.
 */
export function settingsClause(limits: QueryLimits, own: QuerySpec['settings'] = {}): string {
  const secs = Math.max(1, Math.floor(limits.maxExecutionSeconds));
  const rows = Math.max(1, Math.floor(limits.maxResultRows));
  if (!Number.isSafeInteger(secs) || !Number.isSafeInteger(rows)) throw new Error('query limits must be integers');
  const parts = Object.entries(own).map(([k, v]) => {
    if (!SETTING_NAME.test(k) || !SETTING_VALUE.test(String(v))) throw new Error(`bad query setting ${k}`);
    return typeof v === 'number' ? `${k} = ${v}` : `${k} = '${v}'`;
  });
  parts.push(`max_execution_time = ${secs}`, `max_result_rows = ${rows}`, "result_overflow_mode = 'throw'", 'output_format_json_quote_64bit_integers = 0');
  return `\nSETTINGS ${parts.join(', ')}`;
}

/** Epoch milliseconds as ClickHouse DateTime64(3) text in UTC (`YYYY-MM-DD hh:mm:ss.sss`). */
export function chTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  // The common case without regular expressions: this runs once per stored row at ingest.
  return iso.length === 24 ? `${iso.slice(0, 10)} ${iso.slice(11, 23)}` : iso.replace('T', ' ').replace('Z', '');
}

/** Runs read statements: the ClickHouse door (door.ts), or a stand-in in a test. */
export interface StatementRunner {
  read<T>(spec: Pick<QuerySpec, 'name' | 'sql' | 'settings'>, params: Record<string, unknown>, ctx: ReadLimits): Promise<T[]>;
}
