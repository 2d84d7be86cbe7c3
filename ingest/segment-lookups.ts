/**
 * Look-ups of what the segments already hold, by the keys of a batch. They make writes
 * idempotent by key rather than by transport position: a packet redelivered after a crash,
 * in whatever batch, finds its own row and is not written again (I1). They read the key tables
 * of migration 012 (ordered by key: a key costs about one granule however large the table) and
 * are asked only about keys the writer's key filter cannot rule out (key-index.ts).
 */
import type { ClickHouseSettings } from '@clickhouse/client';
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';

const CHUNK = 50_000;

async function chunked<T>(keys: string[], run: (chunk: string[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < keys.length; i += CHUNK) out.push(...(await run(keys.slice(i, i + CHUNK))));
  return out;
}

// Keys the decoder validated (lowercase UUIDs, hex digests) go into the query as one TabSeparated
// literal read by format(): ~3x cheaper in ClickHouse than binding an Array parameter of the
// same keys. Anything else is bound as a parameter.
const INLINE_SAFE = /^[0-9a-f-]+$/;
const INLINE_SETTINGS: ClickHouseSettings = { max_query_size: String(CHUNK * 80) };

function keySet(keys: string[], type: 'UUID' | 'FixedString(64)'): { sql: string; params: Record<string, unknown>; settings?: ClickHouseSettings } {
  if (keys.every((k) => INLINE_SAFE.test(k))) {
    return { sql: `(SELECT k FROM format(TSV, 'k ${type}', '${keys.join('\\n')}'))`, params: {}, settings: INLINE_SETTINGS };
  }
  return { sql: `{keys:Array(${type === 'UUID' ? 'UUID' : 'String'})}`, params: { keys } };
}

/** Fingerprints stored per call_id. */
export async function storedInvocations(ch: ClickHouseDoor, callIds: string[]): Promise<Map<string, string>> {
  const found = await chunked(callIds, (ids) => {
    const set = keySet(ids, 'UUID');
    return ch.select<{ k: string; fp: string }>(
      `SELECT toString(call_id) AS k, fingerprint AS fp FROM {db:Identifier}.call_keys WHERE call_id IN ${set.sql}`,
      set.params,
      set.settings,
    );
  });
  return new Map(found.map((r) => [r.k, r.fp]));
}

/** Fingerprints stored per output_id. */
export async function storedOutputs(ch: ClickHouseDoor, outputIds: string[]): Promise<Map<string, string>> {
  const found = await chunked(outputIds, (ids) => {
    const set = keySet(ids, 'UUID');
    return ch.select<{ k: string; fp: string }>(
      `SELECT toString(output_id) AS k, fingerprint AS fp FROM {db:Identifier}.output_keys WHERE output_id IN ${set.sql}`,
      set.params,
      set.settings,
    );
  });
  return new Map(found.map((r) => [r.k, r.fp]));
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
  const pre = [...new Set(pairs.map((p) => p.preceding_call_id))];
  const found = await chunked(tasks, (t) =>
    ch.select<{ k: string; fp: string }>(
      `SELECT concat(toString(preceding_call_id), '>', toString(succeeding_call_id)) AS k, fingerprint AS fp
       FROM {db:Identifier}.tool_workflows
       WHERE task_id IN {tasks:Array(String)} AND preceding_call_id IN {pre:Array(UUID)} AND origin = 'emitted'`,
      { tasks: t, pre },
    ),
  );
  return new Map(found.map((r) => [r.k, r.fp]));
}

/** Quarantine records already written for these transport positions. */
export async function storedQuarantine(ch: ClickHouseDoor, sourceKeys: string[]): Promise<Set<string>> {
  const found = await chunked(sourceKeys, (k) =>
    ch.select<{ k: string }>('SELECT DISTINCT source_key AS k FROM {db:Identifier}.quarantine_keys WHERE source_key IN {k:Array(String)}', { k }),
  );
  return new Set(found.map((r) => r.k));
}
