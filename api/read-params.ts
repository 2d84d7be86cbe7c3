/**
 * Zod contracts of the read API's inputs (path and query string) and their conversion to query
 * parameters. Unknown query parameters are refused, like unknown packet fields: a misspelt
 * `limt=5` must not silently return 100 rows.
 */
import { z } from 'zod';
import type { TimeWindow } from '../queries/sql.ts';

/** Upper bound of accepted timestamps (exclusive), as for packets. */
export const MAX_TIME_MS = Date.UTC(2200, 0, 1);
/** Rows per page at most (SPEC §5). */
export const MAX_LIMIT = 1000;
/** Rows per page by default (SPEC §5). */
export const DEFAULT_LIMIT = 100;

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const timestamp = z
  .string()
  .max(40)
  .refine((s) => DATE_ONLY.test(s) || z.iso.datetime({ offset: true, local: true }).safeParse(s).success, {
    message: 'must be an ISO-8601 timestamp such as 2026-11-22T10:00:00Z (UTC when no offset is given) or a date 2026-11-22',
  })
  .transform((s) => Date.parse(DATE_ONLY.test(s) || /[zZ]|[+-]\d{2}:?\d{2}$/.test(s) ? s : `${s}Z`))
  .refine((ms) => Number.isFinite(ms) && ms >= 0 && ms <= MAX_TIME_MS, 'must be between 1970-01-01 and 2200-01-01');

/** An identifier in a path (tool_id, agent_id, task_id): what a packet may carry. */
export const pathId = z.string().min(1).max(256);

/** A non-negative integer query parameter in [min, max]. */
export const intParam = (min: number, max: number) =>
  z
    .string()
    .max(20)
    .regex(/^\d+$/, 'must be a non-negative integer')
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n) && n >= min && n <= max, `must be an integer from ${min} to ${max}`);

/** Parameters every list takes. */
export const listQuery = {
  from: timestamp.optional().describe('inclusive lower bound (ISO-8601); default: now minus the default window (90 days)'),
  to: timestamp.optional().describe('exclusive upper bound (ISO-8601); default: no upper bound'),
  limit: intParam(1, MAX_LIMIT).optional().describe(`rows per page, 1…${MAX_LIMIT} (default ${DEFAULT_LIMIT})`),
  cursor: z.string().min(1).max(2048).optional().describe('next_cursor of the previous page; repeat the other parameters unchanged'),
};

/** Query string of the plain lists. */
export const plainListQuery = z.strictObject(listQuery);

/** `min_count` of the grouping endpoints. */
export const minCountParam = intParam(2, 1_000_000_000).optional().describe('smallest group to report (default 2)');

/** `threshold_usd` of /v1/calls/expensive. */
export const thresholdUsdParam = z
  .string()
  .max(32)
  .regex(/^\d+(\.\d+)?([eE][+-]?\d+)?$/, 'must be a non-negative number')
  .transform(Number)
  .refine((n) => Number.isFinite(n) && n <= 1e12, 'must be a number from 0 to 1e12')
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

/** The window of a request: its from/to, or the defaults. Throws when from is not before to. */
export function windowOf(q: { from?: number; to?: number }, defaults: ReadDefaults, now = Date.now(), all = false): TimeWindow {
  const fromMs = q.from ?? (all ? 0 : Math.max(0, now - defaults.windowDays * 86_400_000));
  const toMs = q.to ?? MAX_TIME_MS;
  if (fromMs >= toMs) throw new BadRequest('from must be before to');
  return { fromMs, toMs };
}

/** A request the client can fix; answered 400 with its message. */
export class BadRequest extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BadRequest';
  }
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
