/**
 * What every read query shares: its published description (SQL text + parameters, so Grafana
 * panels can run the very same statement), the context it runs in, and the window and page
 * helpers. Pure: statements run through a {@link StatementRunner}, which the ClickHouse door
 * (platform/clickhouse/door.ts) provides, with its one error map (a ClickHouse-side limit is an
 * AppError `CLICKHOUSE_LIMIT_EXCEEDED`).
 */
import { chTime, type QuerySpec, type ReadLimits, type StatementRunner } from '../platform/clickhouse/statement.ts';

export { chTime, settingsClause, type QueryLimits, type QuerySpec, type StatementRunner } from '../platform/clickhouse/statement.ts';

/** How read queries run: limits, derived-field thresholds and (optionally) metrics. */
export interface QueryContext extends ReadLimits {
  /** `expensive = cost_usd > expensiveThresholdUsd` on every returned invocation. */
  expensiveThresholdUsd: number;
}

/** Defaults matching platform/config.ts, for callers without a configuration (tests, scripts). */
export const DEFAULT_QUERY_CONTEXT: QueryContext = {
  limits: { maxExecutionSeconds: 30, maxResultRows: 100_000 },
  expensiveThresholdUsd: 1.0,
};

/** Runs a read statement with the context's limits and returns its rows (JSONEachRow). */
export function runQuery<T>(ch: StatementRunner, spec: Pick<QuerySpec, 'name' | 'sql' | 'settings'>, params: Record<string, unknown>, ctx: QueryContext): Promise<T[]> {
  return ch.read<T>(spec, params, ctx);
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
