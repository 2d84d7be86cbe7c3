/**
 * Look-up of the optimization hints already stored, by hint_id: a hint redelivered (or sent again
 * by its producer) finds its row and is not written twice; another hint under the same hint_id is
 * an I1 conflict. Kept apart from segment-lookups.ts (the hot path of the three core segments).
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { STORED_FINGERPRINT_SQL } from './ports.ts';
import { keySet, sizedFor } from './segment-lookups.ts';

/** Fingerprints stored per hint_id (lowercase UUIDs, as the decoder wrote them). */
export async function storedHints(ch: ClickHouseDoor, hintIds: string[]): Promise<Map<string, string>> {
  const set = keySet(hintIds, 'UUID');
  const found = await ch.select<{ k: string; fp: string }>(
    `SELECT toString(hint_id) AS k, ${STORED_FINGERPRINT_SQL} AS fp FROM {db:Identifier}.workflow_optimizations WHERE hint_id IN ${set.sql}`,
    {},
    sizedFor(set),
  );
  return new Map(found.map((r) => [r.k, r.fp]));
}
