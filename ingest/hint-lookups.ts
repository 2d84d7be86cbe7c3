/**
 * Look-up of the optimization hints, model turns and agent runs already stored, by id: one
 * redelivered (or sent again by its producer, or re-exported as a span) finds its row and is not
 * written twice; another under the same id is an I1 conflict. Kept apart from segment-lookups.ts
 * (the hot path of the three core segments).
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { STORED_FINGERPRINT_SQL } from './ports.ts';

/** Fingerprints stored per hint_id (lowercase UUIDs, as the decoder wrote them). */
export function storedHints(ch: ClickHouseDoor, hintIds: string[]): Promise<Map<string, string>> {
  return storedById(ch, `SELECT toString(hint_id) AS k, ${STORED_FINGERPRINT_SQL} AS fp FROM {db:Identifier}.workflow_optimizations WHERE hint_id IN {ids:KeySet(UUID)}`, hintIds);
}

/** Fingerprints stored per turn_id (lowercase UUIDs, as the decoder wrote them). */
export function storedTurns(ch: ClickHouseDoor, turnIds: string[]): Promise<Map<string, string>> {
  return storedById(ch, `SELECT toString(turn_id) AS k, ${STORED_FINGERPRINT_SQL} AS fp FROM {db:Identifier}.model_turns WHERE turn_id IN {ids:KeySet(UUID)}`, turnIds);
}

/** Fingerprints stored per run_id (lowercase UUIDs, as the decoder wrote them). */
export function storedRuns(ch: ClickHouseDoor, runIds: string[]): Promise<Map<string, string>> {
  return storedById(ch, `SELECT toString(run_id) AS k, ${STORED_FINGERPRINT_SQL} AS fp FROM {db:Identifier}.agent_runs WHERE run_id IN {ids:KeySet(UUID)}`, runIds);
}

async function storedById(ch: ClickHouseDoor, sql: string, ids: string[]): Promise<Map<string, string>> {
  const found = await ch.select<{ k: string; fp: string }>(sql, { ids });
  return new Map(found.map((r) => [r.k, r.fp]));
}
