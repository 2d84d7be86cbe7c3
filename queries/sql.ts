/**
 * What every read query shares: its published description (SQL text + parameters, so Grafana
 * panels can run the very same statement), the execution limits ClickHouse enforces on it, and
 * the mapping of ClickHouse failures to errors the API can answer with.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { AppError } from '../platform/errors.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';

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

/** How read queries run: limits, derived-field thresholds and (optionally) metrics. */
export interface QueryContext {
  limits: QueryLimits;
  /** `expensive = cost_usd > expensiveThresholdUsd` on every returned invocation. */
  expensiveThresholdUsd: number;
  metrics?: MetricsRegistry;
}

/** Defaults matching platform/config.ts, for callers without a configuration (tests, scripts). */
export const DEFAULT_QUERY_CONTEXT: QueryContext = {
  limits: { maxExecutionSeconds: 30, maxResultRows: 100_000 },
  expensiveThresholdUsd: 1.0,
};

/**
 * A query stopped by a ClickHouse-side limit (time or result rows). Not a fault: the request
 * asked for too much, and narrowing the time range or the limit will help.
 */
export class QueryLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QueryLimitError';
  }
}

/** A parameter the caller can fix (a malformed or foreign cursor, an inverted window): a 400. */
export class InvalidParamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidParamError';
  }
}

// ClickHouse error codes of the limits set below: TIMEOUT_EXCEEDED, TOO_MANY_ROWS_OR_BYTES,
// TOO_MANY_ROWS, MEMORY_LIMIT_EXCEEDED.
const LIMIT_CODES = new Set(['159', '396', '158', '241']);
// Codes of a busy or unreachable server (too many queries, socket/network errors): retry later.
const BUSY_CODES = new Set(['202', '209', '210', '394']);
const LIMIT_TEXT = /Timeout exceeded|Limit for result exceeded|Memory limit .* exceeded/i;

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

/**
 * Runs a read query with the context's limits and returns its rows (JSONEachRow). A limit hit
 * becomes a {@link QueryLimitError}; any other failure an AppError (ClickHouse unavailable or the
 * query rejected — the latter is a bug, as every value arrives as a typed parameter).
 */
export async function runQuery<T>(
  ch: ClickHouseClient,
  spec: Pick<QuerySpec, 'name' | 'sql' | 'settings'>,
  params: Record<string, unknown>,
  ctx: QueryContext,
): Promise<T[]> {
  const started = performance.now();
  try {
    const rs = await ch.query({ query: spec.sql + settingsClause(ctx.limits, spec.settings), query_params: params, format: 'JSONEachRow' });
    const rows = await rs.json<T>();
    ctx.metrics?.observe('tool_audit_query_seconds', 'Read query latency (ClickHouse + decoding)', (performance.now() - started) / 1000, {
      query: spec.name,
    });
    return rows;
  } catch (err) {
    const code = String((err as { code?: unknown }).code ?? '');
    const message = (err as Error).message ?? String(err);
    const limited = LIMIT_CODES.has(code) || LIMIT_TEXT.test(message);
    ctx.metrics?.inc('tool_audit_query_failures_total', 'Read queries that failed', { query: spec.name, reason: limited ? 'limit' : 'error' });
    if (limited) {
      throw new QueryLimitError(`query ${spec.name} exceeded a server-side limit (${message.split('\n')[0]?.slice(0, 200)}); narrow from/to or lower limit`);
    }
    // An error ClickHouse answered with a code is the statement's (a bug: values are all typed
    // parameters) → 500; anything else (connection refused, timeout) may pass → 503, retry.
    const answered = /^\d+$/.test(code) && !BUSY_CODES.has(code);
    throw new AppError('CLICKHOUSE_QUERY_FAILED', `query ${spec.name} failed: ${message.slice(0, 500)}`, { retryable: !answered, cause: err });
  }
}

/** ClickHouse DateTime64(3) parameter text of epoch milliseconds (UTC). */
export function chTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** Epoch milliseconds → ISO-8601 with `Z`, as the API returns every timestamp. */
export function isoTime(ms: number | string): string {
  return new Date(Number(ms)).toISOString();
}

/** A half-open time range [fromMs, toMs) in epoch milliseconds. */
export interface TimeWindow {
  fromMs: number;
  toMs: number;
}

/** Window placeholders shared by every windowed query. */
export function windowParams(w: TimeWindow): { from: string; to: string } {
  return { from: chTime(w.fromMs), to: chTime(w.toMs) };
}

/** Describes the window placeholders in a {@link QuerySpec}. */
export const WINDOW_PARAM_DOCS = {
  db: 'database of the segments (Identifier)',
  from: "inclusive lower bound of created_at, 'YYYY-MM-DD hh:mm:ss.sss' UTC",
  to: 'exclusive upper bound of created_at, same format',
} as const;

/** Describes the page placeholders in a {@link QuerySpec}. */
export const PAGE_PARAM_DOCS = {
  has_cursor: 'false on the first page; true to continue after the c_* sort key of the last row returned',
  limit: 'rows to return (the API asks for one more to know whether a next page exists)',
} as const;

/** Keeps at most `limit` rows and says whether more exist (the query fetched limit + 1). */
export function pageOf<T>(rows: T[], limit: number): { rows: T[]; more: boolean } {
  return rows.length > limit ? { rows: rows.slice(0, limit), more: true } : { rows, more: false };
}

/** The rows of an aggregate `[key, count]` list as an object, keeping the query's order. */
export function countsObject(rows: Array<{ k: string; n: number | string }>): Record<string, number> {
  // Null prototype: keys are data (error messages), and '__proto__' must stay an ordinary key.
  const out = Object.create(null) as Record<string, number>;
  for (const r of rows) out[r.k] = Number(r.n);
  return out;
}
