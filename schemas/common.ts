/**
 * Building blocks shared by the packet schemas of SPEC §1.
 */
import { z } from 'zod';
import { MAX_NAME_LENGTH } from './vocabulary.ts';

/** A UUID in its 8-4-4-4-12 hex form (any version; case-insensitive). */
export const uuidSchema = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID string');

/** A lowercase hex SHA-256 digest. */
export const sha256HexSchema = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters (SHA-256)');

/**
 * A UTC timestamp as an ISO-8601 string with an explicit offset (`Z` or `±hh:mm`). Stored with
 * millisecond precision: finer digits (Python's isoformat writes microseconds) are truncated.
 */
export const timestampSchema = z.iso
  .datetime({ offset: true, message: 'must be an ISO-8601 timestamp with a UTC offset, e.g. 2026-11-22T10:00:00.123Z' })
  .refine((s) => {
    const ms = Date.parse(s);
    return ms >= MIN_TS && ms < MAX_TS;
  }, 'must be a real date between 1970-01-01 and 2200-01-01');

const MIN_TS = 0;
const MAX_TS = Date.UTC(2200, 0, 1);

/** A non-empty identifier-like name (tool_id, agent_id, …). */
export const nameSchema = z.string().min(1).max(MAX_NAME_LENGTH);

/** A JSON object (args, result_summary). */
export const jsonObjectSchema = z.record(z.string(), z.unknown());

/** Milliseconds since the epoch of a timestamp accepted by {@link timestampSchema}. */
export function timestampMs(ts: string): number {
  return Date.parse(ts);
}
