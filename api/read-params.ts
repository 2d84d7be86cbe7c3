/**
 * Zod contracts of the read API's inputs (path and query string) and their conversion to query
 * parameters. Unknown query parameters are refused, like unknown packet fields: a misspelt
 * `limt=5` must not silently return 100 rows.
 */
import { z } from 'zod';
import type { TimeWindow } from '../queries/sql.ts';
import { badRequest } from '../platform/errors.ts';

/** Upper bound of accepted timestamps (exclusive), as for packets. */
export const MAX_TIME_MS = Date.UTC(2200, 0, 1);
/** Rows per page at most (SPEC §5). */
export const MAX_LIMIT = 1000;
/** Rows per page by default (SPEC §5). */
export const DEFAULT_LIMIT = 100;

/**
 * What each parameter is on the wire, as OpenAPI publishes it (openapi.ts reads this registry in
 * place of what zod would derive from a string-to-number pipe: `{type: string, pattern}` with the
 * bounds lost). Each entry is built from the same numbers and pattern the zod schema enforces,
 * and the conformance test feeds every declared bound back to the server.
 */
export const wireSchemas = z.registry<Record<string, unknown>>();
const declare = <T extends z.ZodType>(schema: T, wire: Record<string, unknown>): T => {
  wireSchemas.add(schema, wire);
  return schema;
};

// Every component is range-checked by the pattern, days per month and leap years included, years
// 1970…2199 and 2200-01-01, so the pattern says exactly what is accepted. No look-around: RE2-based
// validators (Go's, Rust's regex) compile it (test/unit/api/openapi-patterns.test.ts). Leap years
// in range: 1972…1996, 2000…2096, 2104…2196 (2100 is not one).
const LEAP_DAY = '(?:19(?:7[26]|8[048]|9[26])|20(?:[02468][048]|[13579][26])|21(?:0[48]|[2468][048]|[13579][26]))-02-29';
const MONTH_DAY = '(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))';
const TIME_OF_DAY = '(T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?([zZ]|[+-]([01]\\d|2[0-3]):?[0-5]\\d)?)?';
const TIMESTAMP_PATTERN = `^(?:${LEAP_DAY}|(?:19[7-9]\\d|2[01]\\d\\d)-${MONTH_DAY}|2200-01-01)${TIME_OF_DAY}$`;
const TIMESTAMP = new RegExp(TIMESTAMP_PATTERN);

/** Epoch ms of a timestamp matching TIMESTAMP (no offset = UTC). */
function timestampMsOf(s: string): number {
  const [date = '', rest = ''] = s.split('T');
  const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
  const m = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(.*)$/.exec(rest);
  const [h, mi, sec, frac] = m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0), Number(((m[4] ?? '') + '000').slice(0, 3))] : [0, 0, 0, 0];
  const off = /^([+-])(\d{2}):?(\d{2})$/.exec(m?.[5] ?? '');
  const offsetMs = off ? (off[1] === '-' ? -1 : 1) * (Number(off[2]) * 60 + Number(off[3])) * 60_000 : 0;
  return Date.UTC(y, mo - 1, d, h, mi, sec, frac) - offsetMs;
}

const timestamp = declare(
  z
    .string()
    .regex(TIMESTAMP, 'must be an ISO-8601 timestamp from 1970-01-01 to 2200-01-01 such as 2026-11-22T10:00:00Z (UTC when no offset is given) or a date 2026-11-22')
    .transform(timestampMsOf)
    // An offset may move the first or last instants of the range past it: clamped, not refused.
    .transform((ms) => Math.min(Math.max(ms, 0), MAX_TIME_MS)),
  // format for generators and readers (a date-time; a date alone is accepted too); the pattern is exact.
  { type: 'string', format: 'date-time', pattern: TIMESTAMP_PATTERN },
);

/** An identifier in a path (tool_id, agent_id, task_id): what a packet may carry. */
export const pathId = z.string().min(1).max(256);

/** A decimal integer from min to max, declared as an integer with those bounds. */
export const intParam = (min: number, max: number) =>
  declare(
    z
      .string()
      .max(20)
      .regex(/^\d+$/, 'must be a non-negative integer')
      .transform(Number)
      .refine((n) => Number.isSafeInteger(n) && n >= min && n <= max, `must be an integer from ${min} to ${max}`),
    { type: 'integer', minimum: min, maximum: max },
  );

// base64url of the last row's sort key: nothing to percent-encode, so a cursor of the longest
// accepted length fits in any request line the server takes (no 431).
const CURSOR_PATTERN = '^[A-Za-z0-9_-]+$';
const MAX_CURSOR_LENGTH = 2048;

/** Parameters every list takes. */
export const listQuery = {
  from: timestamp.optional().describe('inclusive lower bound (ISO-8601; a date is midnight UTC, no offset is UTC); default: now minus the default window (90 days)'),
  to: timestamp.optional().describe('exclusive upper bound (ISO-8601, as from); default: no upper bound'),
  limit: intParam(1, MAX_LIMIT).optional().describe(`rows per page, 1…${MAX_LIMIT} (default ${DEFAULT_LIMIT})`),
  cursor: z
    .string()
    .min(1)
    .max(MAX_CURSOR_LENGTH)
    .regex(new RegExp(CURSOR_PATTERN), 'must be the next_cursor of a previous page')
    .optional()
    .describe('next_cursor of the previous page; repeat the other parameters unchanged'),
};

/** Query string of the plain lists. */
export const plainListQuery = z.strictObject(listQuery);

/** `error_category` of /v1/calls/failed. */
export const errorCategoryParam = z
  .string()
  .min(1)
  .max(128)
  .optional()
  .describe("only failed calls of this error_category (tool-smith's: validation_error, auth_error, not_found, rate_limit, timeout, server_error; or the tool's own)");

/** `min_count` of the grouping endpoints. */
export const minCountParam = intParam(2, 1_000_000_000).optional().describe('smallest group to report (default 2)');

/** `bucket_s` of /v1/tools/series: from a minute to 31 days (a bucket count the client chooses with the window). */
export const bucketSecondsParam = intParam(60, 31 * 86_400).optional().describe('width of a time bucket in seconds, 60…2678400 (default 3600)');

/** `threshold_usd` of /v1/calls/expensive. */
export const thresholdUsdParam = declare(
  z
    .string()
    .max(32)
    .regex(/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/, 'must be a number')
    .transform(Number)
    .refine((n) => Number.isFinite(n) && n >= 0 && n <= 1e12, 'must be a number from 0 to 1e12'),
  { type: 'number', minimum: 0, maximum: 1e12 },
)
  .optional()
  .describe('calls costing more than this many USD (default: the configured expensive threshold, 1.0)');

/** `threshold_ms` of /v1/calls/slow. */
export const thresholdMsParam = intParam(0, Number.MAX_SAFE_INTEGER).optional().describe('calls lasting longer than this (default 30000)');

/** Defaults a request gets for what it omits. */
export interface ReadDefaults {
  /** `from` = now minus this many days. */
  windowDays: number;
  expensiveThresholdUsd: number;
  slowThresholdMs: number;
}

/**
 * The window of a request: its from/to, or the defaults. Throws when from is after to; from equal
 * to to is the empty range [t, t), a valid question whose answer is empty.
 */
export function windowOf(q: { from?: number; to?: number }, defaults: ReadDefaults, now = Date.now(), all = false): TimeWindow {
  const fromMs = q.from ?? (all ? 0 : Math.max(0, now - defaults.windowDays * 86_400_000));
  const toMs = q.to ?? MAX_TIME_MS;
  if (fromMs > toMs) throw badRequest('from must not be after to');
  return { fromMs, toMs };
}

/**
 * The entries of `o` that are set (not undefined, not ''): optional filters as a query method
 * takes them, where an absent one and an empty one both mean "no filter".
 */
export function given<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== '')) as { [K in keyof T]?: Exclude<T[K], undefined> };
}

/** One line per zod issue, naming the parameter. */
export function issuesText(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const where = i.path.join('.') || 'query';
      const msg = i.code === 'unrecognized_keys' ? `unknown parameter(s): ${i.keys.map((k) => JSON.stringify(k.slice(0, 40))).join(', ')}` : i.message;
      return `${where}: ${msg}`;
    })
    .join('; ');
}
