/**
 * `tool-audit verify`: recomputes the audit log from ClickHouse and names every record that is
 * not as the log says.
 *  - altered: a row whose fields no longer hash to its leaf (the part it is in is named);
 *  - deleted: a leaf whose row is gone — unless retention took it (its created_at is past the
 *    kind's TTL: that is expiry, not tampering);
 *  - inserted: a row stored before the newest head's built_to with no leaf, or a second row with
 *    a key that has one (the part is named);
 *  - log: stored leaves that no longer give the stored subtree roots or the signed root (leaves
 *    reordered, changed or dropped in the log itself), by the range of leaves concerned;
 *  - witness: the stored log contradicts a checkpoint witnessed outside ClickHouse (the rewritten
 *    range named), or a checkpoint or head is signed by no trusted key (verify-witness.ts);
 *  - future: a row dated after now, which no head can cover (an insert dated ahead to stay out
 *    of the log);
 *  - content: an output content that does not hash to its content_hash (contents are stored once
 *    per hash, outside the leaves: the leaf covers the hash).
 *
 * One pass over the rows: the log is cut into slices of storage time (a slice per ~million
 * leaves, the log being in storage order), and per slice and kind one statement joins the rows
 * stored in it with its leaves both ways, so altered, deleted and inserted records come out of the
 * same read. The few records that match nothing in their slice (a row whose storage time was
 * changed, a second copy of a logged record stored at another time) are looked up by key. Memory
 * stays bounded by the slice whatever the log's size, and at most `maxFindings` are kept (every
 * one is counted).
 */
import type { KeyObject } from 'node:crypto';
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { chTime } from '../../platform/clickhouse/statement.ts';
import { headSigned, publicKeyFrom } from './heads.ts';
import { BLOCK, keysFilter, LEAF_KINDS, leafSelect, leafTable, storedColumn, type LeafKind } from './leaf-sql.ts';
import { doorSelect, latestHead, type StoredHead } from './log-store.ts';
import { checkTree } from './verify-tree.ts';
import type { Finding } from './finding.ts';
import { forgedContents, futureRows } from './verify-unlogged.ts';
import { checkWitnessed, readLedger, type WitnessReport } from './verify-witness.ts';


/** What verify read and found, and the seconds each part took. */
export interface VerifyReport {
  treeSize: number;
  checkedLeaves: number;
  expired: number;
  /** The first `maxFindings` findings. */
  findings: Finding[];
  /** Every finding, counted (more than `findings` holds when the cap was reached). */
  found: Record<Finding['what'], number>;
  seconds: { records: number; tree: number; witness: number; contents: number };
  /** The check against the witnessed checkpoints, when a ledger was given. */
  witness?: Omit<WitnessReport, 'problems'>;
}

/** Options: the leaves to check ([fromLeaf, toLeaf)), retention per kind in days, and the pinned key. */
export interface VerifyOptions {
  fromLeaf?: number;
  toLeaf?: number;
  /** Days each kind is kept (a kind not named is never removed by retention). */
  retentionDays: Partial<Record<LeafKind, number>>;
  publicKey?: string;
  now?: number;
  /** Leaves per slice (default 1,000,000). */
  chunk?: number;
  /** Findings kept in the report (default 10,000); the rest are counted. */
  maxFindings?: number;
  /** The checkpoints witnessed (a ledger's entries), the log's origin and the keys trusted to sign them. */
  witness?: { entries: Parameters<typeof readLedger>[0]; origin: string; keys: KeyObject[] };
  /** Rows dated this far after now are future-dated (default 5 minutes: clocks of hosts differ). */
  futureSkewMs?: number;
}

/** Where findings go: the first `max` kept, all counted. */
class FindingSink {
  readonly list: Finding[] = [];
  readonly found: Record<Finding['what'], number> = { altered: 0, deleted: 0, inserted: 0, log: 0, witness: 0, future: 0, content: 0 };
  constructor(private readonly max: number) {}
  add(f: Finding): void {
    this.found[f.what]++;
    if (this.list.length < this.max) this.list.push(f);
  }
}

/** Verifies the log against the segments. */
export async function verifyLog(ch: ClickHouseDoor, o: VerifyOptions): Promise<VerifyReport> {
  const head = await latestHead(doorSelect(ch));
  const size = head?.tree_size ?? 0;
  const from = Math.max(0, o.fromLeaf ?? 0);
  const to = Math.min(size, o.toLeaf ?? size);
  const sink = new FindingSink(o.maxFindings ?? 10_000);
  const seconds = { records: 0, tree: 0, witness: 0, contents: 0 };
  let witness: VerifyReport['witness'];
  const report = (expired: number): VerifyReport => ({ treeSize: size, checkedLeaves: Math.max(0, to - from), expired, findings: sink.list, found: sink.found, seconds, ...(witness ? { witness } : {}) });
  const clock = () => performance.now() / 1000;
  let t = clock();
  // The tree first: its block roots, found equal to their leaves, serve the witness check.
  const tree = head ? await checkTree(ch, size, head.root_hash) : [];
  seconds.tree = clock() - t;
  t = clock();
  const storedBlocks = tree.some((f) => f.leaf !== undefined) ? 0 : Math.floor(size / BLOCK);
  // What was witnessed, listed first: a history rewritten with its heads has no head left to say so.
  if (o.witness) witness = await witnessCheck(ch, o.witness, head, storedBlocks, sink);
  seconds.witness = clock() - t;
  t = clock();
  const now = o.now ?? Date.now();
  const add = (f: Finding) => sink.add(f);
  await futureRows(ch, now + (o.futureSkewMs ?? 300_000), add);
  await forgedContents(ch, add);
  seconds.contents = clock() - t;
  if (!head) return report(0);
  if (o.publicKey && !headSigned(head, publicKeyFrom(o.publicKey))) sink.add({ what: 'log', detail: `the newest head (tree of ${size}) is not signed by the key given` });
  t = clock();
  let expired = 0;
  if (from < to) {
    const kinds = await kindsPresent(ch);
    for (const slice of await timeSlices(ch, from, to, o.chunk ?? 1_000_000, to === size ? head.built_to_ms : undefined)) {
      for (const kind of kinds) expired += await checkSlice(ch, { kind, ...slice, from, to, expiredBefore: o.retentionDays[kind] === undefined ? Number.NEGATIVE_INFINITY : now - o.retentionDays[kind] * 86_400_000 }, sink);
    }
  }
  seconds.records = clock() - t;
  for (const f of tree) sink.add({ what: 'log', ...f });
  return report(expired);
}

/**
 * The kinds with a leaf or a row at all: a kind with neither (no budgets, no MCP gateway) would cost
 * a pass over each slice's leaves for nothing. Rows counted from the parts' metadata.
 */
async function kindsPresent(ch: ClickHouseDoor): Promise<LeafKind[]> {
  const logged = new Set((await ch.select<{ kind: string }>('SELECT DISTINCT kind FROM {db:Identifier}.audit_log_leaves')).map((r) => r.kind));
  const present: LeafKind[] = [];
  for (const kind of LEAF_KINDS) {
    if (logged.has(kind)) present.push(kind);
    else if (Number((await ch.select<{ n: string }>(`SELECT count() AS n FROM {db:Identifier}.${leafTable(kind)}`))[0]?.n ?? 0) > 0) present.push(kind);
  }
  return present;
}

/** A slice of storage time [lo, hi) in epoch ms. */
interface Slice {
  lo: number;
  hi: number;
}

/**
 * Slices of storage time covering leaves [from, to), one per `chunk` leaves: cut at the storage
 * time of every chunk-th leaf. The first starts at the epoch when the whole log is checked (rows
 * older than the first leaf), the last ends after `builtTo` (every row the head covers) or after
 * the last leaf checked.
 */
async function timeSlices(ch: ClickHouseDoor, from: number, to: number, chunk: number, builtTo: number | undefined): Promise<Slice[]> {
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

interface SliceCheck extends Slice {
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
async function checkSlice(ch: ClickHouseDoor, s: SliceCheck, sink: FindingSink): Promise<number> {
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
async function leavesWithoutRow(ch: ClickHouseDoor, s: SliceCheck, leaves: SliceRow[], sink: FindingSink): Promise<number> {
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
async function rowsWithoutLeaf(ch: ClickHouseDoor, s: SliceCheck, rows: SliceRow[], sink: FindingSink): Promise<void> {
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

/** The witnessed checkpoints against the stored log; each problem a finding. */
async function witnessCheck(ch: ClickHouseDoor, w: NonNullable<VerifyOptions['witness']>, head: StoredHead | undefined, storedBlocks: number, sink: FindingSink): Promise<VerifyReport['witness']> {
  const ledger = await readLedger(w.entries, w);
  const [n] = await ch.select<{ n: string }>('SELECT max(leaf_index) + 1 AS n FROM {db:Identifier}.audit_log_leaves HAVING count() > 0');
  const r = await checkWitnessed(ch, ledger, { origin: w.origin, keys: w.keys, storedLeaves: Number(n?.n ?? 0), storedBlocks, ...(head ? { newestHead: head } : {}) });
  for (const p of r.problems) sink.add({ what: 'witness', detail: p.detail });
  const { problems: _problems, ...rest } = r;
  return rest;
}
