/**
 * Version numbers that hold across processes: of the tool manifest (migration 025) and of the
 * budget set (migration 026). ClickHouse has no transaction to make "max + 1, then write" atomic,
 * so an apply claims its number first:
 *
 *  1. It reads the newest written version and the newest claimed one; a claim newer than every
 *     written version is an apply in progress elsewhere, which it waits for (its base would
 *     otherwise miss that apply's changes), up to {@link STALE_CLAIM_MS} (then the claimer is
 *     taken for dead and its number skipped).
 *  2. It claims the next number (the claim's time is the server's now64() at insert).
 *  3. After the cutover's {@link MARGIN_MS} — by then every claim stamped before its own is
 *     visible, as an insert commits within that margin (the window aggregates' cutover rests on it) —
 *     it reads the number's claims: the earliest (ties: the smaller apply_id) wins and writes; the
 *     others start again from 1.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '../platform/errors.ts';
import { MARGIN_MS } from '../platform/clickhouse/cutover.ts';
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';

/** A claim not written as a version after this long is taken for a dead apply and skipped. */
export const STALE_CLAIM_MS = 10_000;
const POLL_MS = 100;
const MAX_ATTEMPTS = 20;

/** Which versions are claimed: the claims table, the table the versions are written to, what they are. */
export interface ClaimTables {
  claims: string;
  versions: string;
  /** Named in errors. */
  what: string;
  /** Versions are milliseconds since the epoch (budgets): a new one is at least the server's now. */
  atLeastNow?: boolean;
}

/** The tool manifest's versions: 1, 2, 3, … */
export const MANIFEST_CLAIMS: ClaimTables = { claims: 'manifest_claims', versions: 'tool_manifests', what: 'manifest' };

const STATE = `SELECT
  (SELECT max(version) FROM {db:Identifier}.{versions:Identifier}) AS written,
  (SELECT max(version) FROM {db:Identifier}.{claims:Identifier}) AS claimed,
  (SELECT toUnixTimestamp64Milli(max(claimed_at)) FROM {db:Identifier}.{claims:Identifier} WHERE version = claimed) AS claimed_ms,
  toUnixTimestamp64Milli(now64(3)) AS now_ms`;
const WINNER = `SELECT toString(apply_id) AS id FROM {db:Identifier}.{claims:Identifier} WHERE version = {v:UInt64} ORDER BY claimed_at, apply_id LIMIT 1`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The number an apply may write: claimed by it and won. Call inside the process's own apply queue (serializedApply). */
export async function claimVersion(door: ClickHouseDoor, appliedBy: string, tables: ClaimTables = MANIFEST_CLAIMS): Promise<number> {
  const names = { claims: tables.claims, versions: tables.versions };
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const v = await nextFreeVersion(door, tables);
    const applyId = randomUUID();
    await door.insertRows(tables.claims, [{ key: applyId, row: { version: v, apply_id: applyId, applied_by: appliedBy } }]);
    await sleep(MARGIN_MS);
    const [winner] = await door.select<{ id: string }>(WINNER, { ...names, v });
    if (winner?.id === applyId) return v;
  }
  throw new AppError('MANIFEST_CONFLICT', `no ${tables.what} version won in ${MAX_ATTEMPTS} attempts: other applies keep claiming first`, { retryable: true });
}

/** The number after every written and claimed one, once no claim newer than the written versions is pending. */
async function nextFreeVersion(door: ClickHouseDoor, tables: ClaimTables): Promise<number> {
  for (;;) {
    const [s] = await door.select<{ written: number | string | null; claimed: number | string | null; claimed_ms: number | string | null; now_ms: number | string }>(STATE, {
      claims: tables.claims,
      versions: tables.versions,
    });
    const written = Number(s?.written ?? 0);
    const claimed = Number(s?.claimed ?? 0);
    const pending = claimed > written && Number(s?.now_ms) - Number(s?.claimed_ms ?? 0) < STALE_CLAIM_MS;
    if (!pending) return Math.max(Math.max(written, claimed) + 1, tables.atLeastNow ? Number(s?.now_ms ?? 0) : 0);
    await sleep(POLL_MS);
  }
}
