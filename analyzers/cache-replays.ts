/**
 * Cache replays (migrations 038–039): the dedup indexer replays each repeated key of a cacheable
 * tool (idempotent in the current manifest, with a TTL) at its manifest TTL once the key's calls
 * change, and keeps the hits and savings in `cache_key_replays`. The cache simulation then sums
 * the kept replays of the keys whose replay is still true and replays only the others
 * (queries/cache-simulation.ts): at 30 M calls, 120 k keys and 1.8 M calls it no longer merges
 * and folds on every read.
 *
 * A replay is true while it is at the TTL asked and no copy of the key's calls can have
 * committed after it: it was made at least the overlap after the key's newest copy (indexed_at,
 * the server's time at the copy's insert, which may commit up to the overlap later; the same
 * bound as the indexer's watermark). Each check records when it began (`cache_replay_checks`): a
 * check at T leaves every key last copied at or before T minus the overlap with a true replay, so
 * a read trusts the replays of the keys not copied since (see {@link RECENT_COPIES}). Until then,
 * and after a manifest change, the key is replayed on the read and again by the next run. An
 * args_key naming two keys (two check_keys) keeps a tombstone (ttl_ms −1) that no read takes. A
 * month of a key's calls dropped by retention does not make its replay stale; reads take a replay
 * only when all its calls lie in the window, so this matters only for a window reaching past
 * retention (docs/api.md).
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { chTime } from '../platform/clickhouse/statement.ts';

/** Keys replayed per statement at most (memory: their calls' arrays, ~15 calls a key in bench:history). */
export const REPLAY_PART_KEYS = 100_000;

/** The current manifest's idempotent flag and TTL per tool (no manifest: no rows). */
export const CURRENT_MANIFEST = `SELECT tool_id, idempotent, cache_ttl_ms FROM {db:Identifier}.tool_manifests
  WHERE version = (SELECT max(version) FROM {db:Identifier}.tool_manifests)`;

/**
 * The replay of one key's calls at TTL `ttl`, in call order: (expiry, hits, saved_ms, saved_usd,
 * and the created_at and call_id of the call before). A call equal to the one before (created_at
 * and call_id) is the same call copied twice into the dedup index (two indexers at once): sorted,
 * copies are neighbours, so skipping them here is what arrayDistinct over the merged array did,
 * without hashing every call (30 M calls: the indexed simulation ~800 → ~630 ms alone).
 */
export const fold = (ttl: string) =>
  `arrayFold((acc, x) -> if(x.1 = acc.5 AND x.2 = acc.6, acc,
        if(x.1 < acc.1, (acc.1, acc.2 + 1, acc.3 + x.4, acc.4 + x.5, x.1, x.2), if(x.3, (x.1 + ${ttl}, acc.2, acc.3, acc.4, x.1, x.2), (acc.1, acc.2, acc.3, acc.4, x.1, x.2)))),
      calls, (toInt64(-1), toUInt64(0), toUInt64(0), toFloat64(0), toInt64(-1), UUIDToNum(toUUID('00000000-0000-0000-0000-000000000000'))))`;

/**
 * Per indexed key of `tools`, as (tool_id, args_key): when its calls were last copied
 * (cache_key_calls.copied_at), and whether args_key names one key only (a key of its own check_key);
 * `and` narrows the keys further.
 */
const KEY_COPIES = (tools: string, and = '') => `SELECT tool_id, args_key, max(copied_at) AS copied, min(check_key) = max(check_key) AS single
  FROM {db:Identifier}.cache_key_calls WHERE tool_id IN ${tools}${and} GROUP BY tool_id, args_key`;

/** The newest replay of each key of `tools`. */
export const KEY_REPLAYS = (tools: string) => `SELECT * FROM {db:Identifier}.cache_key_replays FINAL WHERE tool_id IN ${tools}`;

/** The TTL of a tombstone: the replay of an args_key naming two keys, which no read takes (a TTL is ≥ 0). */
const TOMBSTONE_TTL = -1;

/**
 * The keys whose kept replay a read may not trust yet: copied after the newest complete check
 * minus the overlap (`{overlap_ms}`), or at all when no check is recorded. One column of
 * cache_key_calls, read first; every other key's replay is true as of that check (module TSDoc).
 */
export const RECENT_COPIES = `(SELECT tool_id, args_key FROM {db:Identifier}.cache_key_calls
  PREWHERE copied_at > (SELECT max(checked_at) FROM {db:Identifier}.cache_replay_checks) - toIntervalMillisecond({overlap_ms:UInt32}))`;

const MANIFEST_TTL = (m: string) => `toInt64(ifNull(${m}.cache_ttl_ms, 0))`;
const CACHEABLE = `(SELECT tool_id FROM (${CURRENT_MANIFEST}) AS cm WHERE cm.idempotent = 1 AND ${MANIFEST_TTL('cm')} > 0)`;

/**
 * The keys of cacheable tools a copy may have changed since `{since}` (server time): copied after
 * it (one column, read first). 0 takes every key.
 */
const COPIED_SINCE = `(SELECT tool_id, args_key FROM {db:Identifier}.cache_key_calls
  PREWHERE copied_at > {since:DateTime64(3, 'UTC')} WHERE tool_id IN ${CACHEABLE})`;
const SINCE = ` AND (tool_id, args_key) IN ${COPIED_SINCE}`;

/**
 * Keys of cacheable tools copied since `{since}` whose replay is due: a key of its own without a
 * true replay at its manifest TTL (a missing replay reads as 1970), or an args_key naming two keys
 * whose replay is not a tombstone yet.
 */
const STALE_KEYS = `SELECT c.tool_id, c.args_key FROM (${KEY_COPIES(CACHEABLE, SINCE)}) AS c
  LEFT JOIN (${KEY_REPLAYS(CACHEABLE)}${SINCE}) AS r ON r.tool_id = c.tool_id AND r.args_key = c.args_key
  LEFT JOIN (${CURRENT_MANIFEST}) AS m ON m.tool_id = c.tool_id
  WHERE if(c.single, NOT (r.ttl_ms = ${MANIFEST_TTL('m')} AND r.replayed_at >= c.copied + toIntervalMillisecond({overlap_ms:UInt32})),
    r.replayed_at > 0 AND r.ttl_ms != ${TOMBSTONE_TTL})`;
// Missing rows of a LEFT JOIN as defaults, whatever the user's profile says.
const JOIN_DEFAULTS = 'SETTINGS join_use_nulls = 0';
const STALE_COUNT = `SELECT count() AS n FROM (${STALE_KEYS}) ${JOIN_DEFAULTS}`;
// replayed_at is the statement's start (now64 is evaluated once): no later than the calls it read.
// A key without a hit keeps first_at and last_at at 0: none in any window either (migration 038).
const REPLAY = `INSERT INTO {db:Identifier}.cache_key_replays (tool_id, args_key, ttl_ms, first_at, last_at, hits, saved_ms, saved_usd, replayed_at)
SELECT tool_id, args_key, ttl, fromUnixTimestamp64Milli(if(r.2 = 0, 0, calls[1].1), 'UTC'), fromUnixTimestamp64Milli(if(r.2 = 0, 0, calls[-1].1), 'UTC'),
  r.2, r.3, r.4, now64(3, 'UTC')
FROM (
  SELECT k.tool_id AS tool_id, k.args_key AS args_key, k.key_calls AS calls, if(k.single, ${MANIFEST_TTL('m')}, ${TOMBSTONE_TTL}) AS ttl, ${fold('ttl')} AS r
  FROM (
    -- Named apart from the column it merges (an alias shadows a column in ClickHouse).
    SELECT tool_id, args_key, arraySort(groupArrayMerge(calls)) AS key_calls, min(check_key) = max(check_key) AS single
    FROM {db:Identifier}.cache_key_calls
    WHERE (args_key % {parts:UInt64}) = {part:UInt64} AND (tool_id, args_key) IN (${STALE_KEYS})
    GROUP BY tool_id, args_key
  ) AS k
  INNER JOIN (${CURRENT_MANIFEST}) AS m ON m.tool_id = k.tool_id
)
${JOIN_DEFAULTS}`;

/** Sweep every key at least this often: a replay dropped by retention, or a table emptied to rebuild it. */
export const FULL_SWEEP_MS = 3_600_000;

/**
 * What the last complete check saw, so that the next one looks only at the keys copied since: a
 * copy made at c is visible by c + overlap, so every copy older than the last check minus the
 * overlap was seen by it and, when due, replayed at or after the check. Kept by the one indexer of
 * a process; a new cursor (a start) sweeps every key.
 */
export interface ReplayCursor {
  /** Server time (epoch ms) when the last complete check began. */
  checkedAtMs?: number;
  /** When the last sweep of every key began (server time, epoch ms). */
  sweptAtMs?: number;
  /** The newest manifest version the last check ran under: another one sweeps every key (its TTLs changed). */
  manifest?: string;
  /** The last check recorded in cache_replay_checks (server time, epoch ms). */
  recordedAtMs?: number;
}

const RECORD_CHECK = "INSERT INTO {db:Identifier}.cache_replay_checks (checked_at) SELECT {at:DateTime64(3, 'UTC')}";

const CHECK_STATE = `SELECT toUnixTimestamp64Milli(now64(3, 'UTC')) AS now_ms, toString(max(version)) AS manifest FROM {db:Identifier}.tool_manifests`;

/** The time copies are checked from: 0 (every key) without a cursor, after a manifest change, or when a sweep is due. */
function checkSince(cursor: ReplayCursor | undefined, nowMs: number, manifest: string, overlapMs: number): number {
  if (cursor?.checkedAtMs === undefined || cursor.sweptAtMs === undefined) return 0;
  if (cursor.manifest !== manifest || nowMs - cursor.sweptAtMs >= FULL_SWEEP_MS) return 0;
  return Math.max(0, cursor.checkedAtMs - overlapMs);
}

/**
 * Replays every key of a cacheable tool whose replay is missing or no longer true, in parts of at
 * most `partKeys` keys. Returns how many keys it replayed. With a `cursor`, only the keys copied
 * since its last check are looked at (every key at the first run, after a manifest change and
 * every {@link FULL_SWEEP_MS}); the cursor moves once every part is in. A complete check is then
 * recorded for reads ({@link RECENT_COPIES}), at most every half overlap with a cursor (a row per
 * run otherwise; reads then trust a little less).
 */
export async function refreshCacheReplays(ch: ClickHouseDoor, overlapMs: number, cursor?: ReplayCursor, partKeys = REPLAY_PART_KEYS): Promise<number> {
  const [state] = await ch.select<{ now_ms: number | string; manifest: string }>(CHECK_STATE, {});
  const nowMs = Number(state?.now_ms ?? 0);
  const manifest = state?.manifest ?? '';
  const sinceMs = checkSince(cursor, nowMs, manifest, overlapMs);
  const params = { overlap_ms: overlapMs, since: chTime(sinceMs) };
  const [stale] = await ch.select<{ n: number }>(STALE_COUNT, params);
  const keys = Number(stale?.n ?? 0);
  const parts = Math.ceil(keys / partKeys);
  for (let part = 0; part < parts; part++) await ch.command(REPLAY, { ...params, parts, part });
  const record = cursor?.recordedAtMs === undefined || nowMs - cursor.recordedAtMs >= overlapMs / 2;
  if (record) await ch.command(RECORD_CHECK, { at: chTime(nowMs) });
  if (cursor) Object.assign(cursor, { checkedAtMs: nowMs, manifest, sweptAtMs: sinceMs === 0 ? nowMs : cursor.sweptAtMs, recordedAtMs: record ? nowMs : cursor.recordedAtMs });
  return keys;
}
