/**
 * `verify`'s join of a kind's rows with its leaves, one slice of storage time at a time: for the
 * kinds whose rows are not exactly their leaves (verify-kinds.ts), and for a part of the log
 * (--from-leaf, --to-leaf). Per slice one statement joins the rows stored in it with its leaves
 * both ways, so altered, deleted and inserted records come out of the same read. The few records
 * that match nothing in their slice (a row whose storage time was changed, a second copy of a
 * logged record stored at another time) are looked up by key. Memory stays bounded by the slice
 * whatever the log's size.
 */
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { chTime } from '../../platform/clickhouse/statement.ts';
import type { Finding } from './finding.ts';
import { keysFilter, leafSelect, storedColumn, type LeafKind } from './leaf-sql.ts';

/** Where a slice's findings go. */
export interface FindingTarget {
  add(f: Finding): void;
}

/** A slice of storage time [lo, hi) in epoch ms. */
export interface Slice {
  lo: number;
  hi: number;
}

/**
 * Slices of storage time covering leaves [from, to), one per `chunk` leaves: cut at the storage
 * time of every chunk-th leaf. The first starts at the epoch when the whole log is checked (rows
 * older than the first leaf), the last ends after `builtTo` (every row the head covers) or after
 * the last leaf checked.
 */
export async function timeSlices(ch: ClickHouseDoor, from: number, to: number, chunk: number, builtTo: number | undefined): Promise<Slice[]> {
  const at: number[] = [];
  for (let i = from; i < to; i += chunk) at.push(i);
  at.push(to - 1);
  const rows = await ch.select<{ i: string; t: string }>(
    'SELECT leaf_index AS i, toUnixTimestamp64Milli(stored_at) AS t FROM {db:Identifier}.audit_log_leaves WHERE leaf_index IN {at:Array(UInt64)} ORDER BY i LIMIT 1 BY i',
    { at },
  );
  const times = new Map(rows.map((r) => [Number(r.i), Number(r.t)]));
  const last = times.get(to - 1) ?? 0;
  const cuts = [from === 0 ? 0 : (times.get(from) ?? 0)];
  for (const i of at.slice(1, -1)) {
    const c = times.get(i);
    if (c !== undefined && c > (cuts.at(-1) ?? 0)) cuts.push(c);
  }
  const end = Math.max(last, builtTo ?? last) + 1;
  return cuts.map((lo, k) => ({ lo, hi: cuts[k + 1] ?? end }));
}

export interface SliceCheck extends Slice {
  kind: LeafKind;
  /** The leaves checked: [from, to). */
  from: number;
  to: number;
  /** A leaf without its row created before this (epoch ms) was taken by retention. */
  expiredBefore: number;
}

interface SliceRow {
  has_leaf: string;
  n: string;
  matched: string;
  key: string;
  i: string;
  h: string;
  rh: string;
  part: string;
  created_ms: string;
}

/** One kind's leaves and rows of a slice, joined both ways; returns the leaves retention took. */
export async function checkSlice(ch: ClickHouseDoor, s: SliceCheck, sink: FindingTarget): Promise<number> {
  const stored = storedColumn(s.kind);
  const rows = await ch.select<SliceRow>(
    `SELECT l.has AS has_leaf, r.n AS n, toUInt8(has(r.hashes, l.leaf_hash)) AS matched, if(l.has = 1, l.record_key, r.record_key) AS key, l.leaf_index AS i,
            lower(hex(l.leaf_hash)) AS h, lower(hex(r.hashes[1])) AS rh, r.part AS part, toUnixTimestamp64Milli(l.created_at) AS created_ms
     FROM (SELECT 1 AS has, leaf_index, record_key, leaf_hash, created_at FROM {db:Identifier}.audit_log_leaves
           WHERE kind = {kind:String} AND stored_at >= {lo:DateTime64(3)} AND stored_at < {hi:DateTime64(3)} AND leaf_index >= {a:UInt64} AND leaf_index < {b:UInt64}) AS l
     FULL OUTER JOIN (
       SELECT record_key, groupArray(leaf_hash) AS hashes, arrayStringConcat(groupUniqArray(part), ', ') AS part, count() AS n
       FROM (${leafSelect(s.kind, `${stored} >= {lo:DateTime64(3)} AND ${stored} < {hi:DateTime64(3)}`)})
       GROUP BY record_key
     ) AS r ON r.record_key = l.record_key
     WHERE l.has = 0 OR r.n != 1 OR NOT matched`,
    { kind: s.kind, lo: chTime(s.lo), hi: chTime(s.hi), a: s.from, b: s.to },
    { join_use_nulls: 0 },
  );
  const rowless: SliceRow[] = [];
  const leafless: SliceRow[] = [];
  for (const r of rows) {
    if (Number(r.has_leaf) === 0) leafless.push(r);
    else if (Number(r.n) === 0) rowless.push(r);
    else if (Number(r.n) > 1) sink.add(twice(s.kind, r.key, Number(r.n), r.part, Number(r.matched) === 1));
    else sink.add({ what: 'altered', kind: s.kind, key: r.key, leaf: Number(r.i), part: r.part, detail: `leaf ${r.i}: ${s.kind} ${r.key} in part ${r.part} hashes to ${r.rh}, its leaf is ${r.h}` });
  }
  // A leaf past its kind's retention whose row is gone is expiry: counted, not looked up (the
  // look-ups would grow with the history retention already removed).
  const live = rowless.filter((l) => Number(l.created_ms) >= s.expiredBefore);
  let expired = rowless.length - live.length;
  for (let k = 0; k < live.length; k += LOOKUP) expired += await leavesWithoutRow(ch, s, live.slice(k, k + LOOKUP), sink);
  for (let k = 0; k < leafless.length; k += LOOKUP) await rowsWithoutLeaf(ch, s, leafless.slice(k, k + LOOKUP), sink);
  return expired;
}

/** Keys looked up at once when a record matches nothing in its slice. */
const LOOKUP = 1_000;

const twice = (kind: LeafKind, key: string, n: number, part: string, matched: boolean): Finding => ({
  what: 'inserted',
  kind,
  key,
  part,
  detail: `${kind} ${key} is stored ${n} times (part ${part}): ${matched ? 'one has the leaf, another was inserted' : 'none hashes to its leaf'}`,
});

/** Rows of `keys` wherever they are stored: their hash and part. */
async function rowsByKey(ch: ClickHouseDoor, kind: LeafKind, keys: string[]): Promise<Map<string, { hashes: string[]; parts: string[] }>> {
  const found = await ch.select<{ key: string; rh: string; part: string }>(`SELECT record_key AS key, lower(hex(leaf_hash)) AS rh, part FROM (${leafSelect(kind, keysFilter(kind))})`, { keys });
  const out = new Map<string, { hashes: string[]; parts: string[] }>();
  for (const f of found) {
    const e = out.get(f.key) ?? { hashes: [], parts: [] };
    e.hashes.push(f.rh);
    e.parts.push(f.part);
    out.set(f.key, e);
  }
  return out;
}

/** Leaves whose row is not in their slice: stored at another time (altered), taken by retention, or deleted. */
async function leavesWithoutRow(ch: ClickHouseDoor, s: SliceCheck, leaves: SliceRow[], sink: FindingTarget): Promise<number> {
  const rows = await rowsByKey(ch, s.kind, leaves.map((l) => l.key));
  let expired = 0;
  for (const l of leaves) {
    const row = rows.get(l.key);
    if (row?.hashes.includes(l.h)) {
      // The row is intact but not where the leaf says it was stored: the leaf's stored_at changed.
      sink.add({ what: 'log', kind: s.kind, key: l.key, leaf: Number(l.i), detail: `leaf ${l.i}: ${s.kind} ${l.key} is intact, but the log's storage time of it was changed` });
    } else if (row) {
      // Its storage time was changed (a field of the leaf), so it cannot hash to it: altered.
      const part = [...new Set(row.parts)].join(', ');
      sink.add({ what: 'altered', kind: s.kind, key: l.key, leaf: Number(l.i), part, detail: `leaf ${l.i}: ${s.kind} ${l.key} in part ${part} hashes to ${row.hashes.join(', ')}, its leaf is ${l.h}` });
    } else if (Number(l.created_ms) < s.expiredBefore) expired++;
    else sink.add({ what: 'deleted', kind: s.kind, key: l.key, leaf: Number(l.i), detail: `leaf ${l.i}: no ${s.kind} ${l.key} is stored` });
  }
  return expired;
}

/**
 * Rows with no leaf in their slice: inserted when their key has no leaf at all, or when it is
 * stored more than once; one row whose leaf is elsewhere is that leaf's record stored at another
 * time, which its leaf's slice names (or which is outside the leaves checked).
 */
async function rowsWithoutLeaf(ch: ClickHouseDoor, s: SliceCheck, rows: SliceRow[], sink: FindingTarget): Promise<void> {
  const keys = rows.map((r) => r.key);
  // No index by key (the log keeps none: 107 bytes a call): a scan of the kind's keys, per 1,000
  // rows with no leaf in their slice — tampering, or rows sharing a millisecond with the edge of a
  // --from-leaf/--to-leaf range (a few scans, no finding). A store full of forged rows pays a scan
  // per slice.
  const logged = await ch.select<{ key: string }>('SELECT DISTINCT record_key AS key FROM {db:Identifier}.audit_log_leaves WHERE kind = {kind:String} AND record_key IN {keys:Array(String)}', { kind: s.kind, keys });
  const withLeaf = new Set(logged.map((r) => r.key));
  const everywhere = withLeaf.size > 0 ? await rowsByKey(ch, s.kind, [...withLeaf]) : new Map<string, { hashes: string[]; parts: string[] }>();
  for (const r of rows) {
    if (!withLeaf.has(r.key)) {
      sink.add({ what: 'inserted', kind: s.kind, key: r.key, part: r.part, detail: `${s.kind} ${r.key} in part ${r.part} was stored before the log's head and has no leaf` });
      continue;
    }
    const all = everywhere.get(r.key);
    if (all && all.hashes.length > 1) sink.add(twice(s.kind, r.key, all.hashes.length, [...new Set(all.parts)].join(', '), true));
  }
}
