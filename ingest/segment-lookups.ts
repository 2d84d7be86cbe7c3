/**
 * Look-ups of what the segments already hold, by the keys of a batch. They make writes
 * idempotent by key rather than by transport position: a packet redelivered after a crash,
 * in whatever batch, finds its own row and is not written again (I1). They read the key tables
 * of migration 012 (ordered by key: a key costs about one granule however large the table) and
 * are asked only about keys the writer's key filter cannot rule out (key-index.ts).
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { STORED_FINGERPRINT_SQL } from './ports.ts';

const CHUNK = 50_000;

async function chunked<T>(keys: string[], run: (chunk: string[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < keys.length; i += CHUNK) out.push(...(await run(keys.slice(i, i + CHUNK))));
  return out;
}

// Keys reach the statement as key sets (`{name:KeySet(UUID)}`), which the door renders as one
// TabSeparated literal read by format() (platform/clickhouse/literals.ts says why).

/**
 * Rows of the keys from a key table, and for the keys it lacks, from the segment itself: a key
 * table is filled by a materialized view, which a process killed between the segment's insert and
 * the view's may have left behind. The second look-up (bloom-filter index) is normally only for the
 * key filter's rare false positives, or a round redelivered after such a kill.
 */
async function keyThenSegment<R extends { k: string }>(keys: string[], tables: [keyTable: string, segment: string], lookup: (table: string, keys: string[]) => Promise<R[]>): Promise<R[]> {
  const found = await chunked(keys, (ks) => lookup(tables[0], ks));
  const have = new Set(found.map((r) => r.k));
  const missing = keys.filter((k) => !have.has(k));
  if (missing.length) found.push(...(await chunked(missing, (ks) => lookup(tables[1], ks))));
  return found;
}

/** Key → fingerprint of a UUID key column, through {@link keyThenSegment}. */
async function storedFingerprints(ch: ClickHouseDoor, keys: string[], tables: [string, string], col: string): Promise<Map<string, string>> {
  const rows = await keyThenSegment(keys, tables, async (table, ids) => {
    // As TabSeparated fields: a topic of I1 reuses asks for every key, and JSON doubled the time.
    const fields = await ch.selectFields(`SELECT toString(${col}), ${STORED_FINGERPRINT_SQL} FROM {db:Identifier}.${table} WHERE ${col} IN {ids:KeySet(UUID)}`, { ids });
    return fields.map(([k, fp]) => ({ k: k as string, fp: fp as string }));
  });
  return new Map(rows.map((r) => [r.k, r.fp]));
}

/** Fingerprints stored per call_id. */
export function storedInvocations(ch: ClickHouseDoor, callIds: string[]): Promise<Map<string, string>> {
  return storedFingerprints(ch, callIds, ['call_keys', 'tool_invocations'], 'call_id');
}

/** Fingerprints stored per output_id. */
export function storedOutputs(ch: ClickHouseDoor, outputIds: string[]): Promise<Map<string, string>> {
  return storedFingerprints(ch, outputIds, ['output_keys', 'tool_outputs'], 'output_id');
}

/**
 * Fingerprints of the emitted dependencies stored per pair key `preceding>succeeding`, looked up
 * by task. The analyzer's rows are left out: an orchestrator's own dependency for a pair the
 * analyzer linked is written beside it and supersedes it (readers prefer the emitted row).
 */
export async function storedDependencies(
  ch: ClickHouseDoor,
  pairs: Array<{ task_id: string; preceding_call_id: string }>,
): Promise<Map<string, string>> {
  const tasks = [...new Set(pairs.map((p) => p.task_id))];
  const preceding = [...new Set(pairs.map((p) => p.preceding_call_id))];
  const found = await chunked(tasks, (t) =>
    ch.select<{ k: string; fp: string }>(
      `SELECT concat(toString(preceding_call_id), '>', toString(succeeding_call_id)) AS k, ${STORED_FINGERPRINT_SQL} AS fp
       FROM {db:Identifier}.tool_workflows
       WHERE task_id IN {tasks:KeySet(String)} AND preceding_call_id IN {preceding:KeySet(UUID)} AND origin = 'emitted'`,
      { tasks: t, preceding },
    ),
  );
  return new Map(found.map((r) => [r.k, r.fp]));
}

/** Quarantine records already written for these transport positions (through {@link keyThenSegment}). */
export async function storedQuarantine(ch: ClickHouseDoor, sourceKeys: string[]): Promise<Set<string>> {
  const rows = await keyThenSegment(sourceKeys, ['quarantine_keys', 'quarantine'], async (table, keys) => {
    const fields = await ch.selectFields(`SELECT DISTINCT source_key FROM {db:Identifier}.${table} WHERE source_key IN {keys:KeySet(String)}`, { keys });
    return fields.map(([k]) => ({ k: k as string }));
  });
  return new Set(rows.map((r) => r.k));
}
