/**
 * `tool-audit verify`: recomputes the audit log from ClickHouse and names every record that is
 * not as the log says (issue 30).
 *  - altered: a row whose fields no longer hash to its leaf (the part it is in is named);
 *  - deleted: a leaf whose row is gone — unless retention took it (its created_at is past the
 *    kind's TTL: that is expiry, not tampering);
 *  - inserted: a row stored before the newest head's built_to with no leaf, or a second row with
 *    a key that has one (the part is named);
 *  - log: stored leaves that no longer give the stored subtree roots or the signed root (leaves
 *    reordered, changed or dropped in the log itself), by the range of leaves concerned.
 * Work is per kind and per chunk of leaves, so memory stays bounded whatever the log's size.
 */
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { chTime } from '../../platform/clickhouse/statement.ts';
import { headSigned, publicKeyFrom } from './heads.ts';
import { LEAF_KINDS, leafSelect, storedColumn, type LeafKind } from './leaf-sql.ts';
import { doorSelect, latestHead } from './log-store.ts';
import { checkTree } from './verify-tree.ts';

/** One thing verify found. */
export interface Finding {
  what: 'altered' | 'deleted' | 'inserted' | 'log';
  kind?: LeafKind;
  key?: string;
  leaf?: number;
  /** The data part the row is in (altered, inserted). */
  part?: string;
  detail: string;
}

/** What verify read and found, and the seconds each part took. */
export interface VerifyReport {
  treeSize: number;
  checkedLeaves: number;
  expired: number;
  findings: Finding[];
  seconds: { leaves: number; unlogged: number; tree: number };
}

/** Options: the leaves to check ([fromLeaf, toLeaf)), retention per kind in days, and the pinned key. */
export interface VerifyOptions {
  fromLeaf?: number;
  toLeaf?: number;
  retentionDays: Record<LeafKind, number>;
  publicKey?: string;
  now?: number;
  /** Leaves per chunk (default 1,000,000). */
  chunk?: number;
}

/** Verifies the log against the segments. */
export async function verifyLog(ch: ClickHouseDoor, o: VerifyOptions): Promise<VerifyReport> {
  const sel = doorSelect(ch);
  const head = await latestHead(sel);
  const size = head?.tree_size ?? 0;
  const from = Math.max(0, o.fromLeaf ?? 0);
  const to = Math.min(size, o.toLeaf ?? size);
  const findings: Finding[] = [];
  let expired = 0;
  if (head && o.publicKey && !headSigned(head, publicKeyFrom(o.publicKey))) findings.push({ what: 'log', detail: `the newest head (tree of ${size}) is not signed by the key given` });
  const chunk = o.chunk ?? 1_000_000;
  const clock = () => performance.now() / 1000;
  const seconds = { leaves: 0, unlogged: 0, tree: 0 };
  let t = clock();
  for (let a = from; a < to; a += chunk) {
    const b = Math.min(to, a + chunk);
    for (const kind of LEAF_KINDS) {
      const r = await checkLeaves(ch, kind, a, b, o.retentionDays[kind], o.now ?? Date.now());
      findings.push(...r.findings);
      expired += r.expired;
    }
  }
  seconds.leaves = clock() - t;
  if (head) {
    t = clock();
    for (const kind of LEAF_KINDS) findings.push(...(await unlogged(ch, kind, head.built_to_ms)));
    seconds.unlogged = clock() - t;
    t = clock();
    findings.push(...(await checkTree(ch, size, head.root_hash)));
    seconds.tree = clock() - t;
  }
  return { treeSize: size, checkedLeaves: to - from, expired, findings, seconds };
}

/** The leaves [a, b) of a kind against their rows, row looked up by key among rows stored in the leaves' time range. */
async function checkLeaves(ch: ClickHouseDoor, kind: LeafKind, a: number, b: number, days: number, now: number): Promise<{ findings: Finding[]; expired: number }> {
  const rows = await ch.select<{ i: string; key: string; h: string; rh: string; part: string; created_ms: string; n: string }>(
    `SELECT l.leaf_index AS i, l.record_key AS key, lower(hex(l.leaf_hash)) AS h, lower(hex(r.leaf_hash)) AS rh, r.part AS part,
            toUnixTimestamp64Milli(l.created_at) AS created_ms, r.n AS n
     FROM (SELECT * FROM {db:Identifier}.audit_log_leaves WHERE kind = {kind:String} AND leaf_index >= {a:UInt64} AND leaf_index < {b:UInt64}) AS l
     LEFT JOIN (
       SELECT record_key, any(leaf_hash) AS leaf_hash, any(part) AS part, count() AS n FROM (${leafSelect(kind, `${storedColumn(kind)} >= {lo:DateTime64(3)} AND ${storedColumn(kind)} <= {hi:DateTime64(3)}`)})
       GROUP BY record_key
     ) AS r ON r.record_key = l.record_key
     WHERE r.n = 0 OR r.leaf_hash != l.leaf_hash`,
    { kind, a, b, ...(await storedRange(ch, kind, a, b)) },
    { join_use_nulls: 0 },
  );
  const findings: Finding[] = [];
  let expired = 0;
  for (const r of rows) {
    if (Number(r.n) === 0) {
      if (Number(r.created_ms) < now - days * 86_400_000) expired++;
      else findings.push({ what: 'deleted', kind, key: r.key, leaf: Number(r.i), detail: `leaf ${r.i}: no ${kind} ${r.key} is stored` });
    } else {
      findings.push({ what: 'altered', kind, key: r.key, leaf: Number(r.i), part: r.part, detail: `leaf ${r.i}: ${kind} ${r.key} in part ${r.part} hashes to ${r.rh}, its leaf is ${r.h}` });
    }
  }
  return { findings, expired };
}

async function storedRange(ch: ClickHouseDoor, kind: LeafKind, a: number, b: number): Promise<{ lo: string; hi: string }> {
  const [r] = await ch.select<{ lo: string; hi: string }>(
    'SELECT toUnixTimestamp64Milli(min(stored_at)) AS lo, toUnixTimestamp64Milli(max(stored_at)) AS hi FROM {db:Identifier}.audit_log_leaves WHERE kind = {kind:String} AND leaf_index >= {a:UInt64} AND leaf_index < {b:UInt64}',
    { kind, a, b },
  );
  return { lo: chTime(Number(r?.lo ?? 0)), hi: chTime(Number(r?.hi ?? 0)) };
}

/** Keys a statement of {@link unlogged} groups at most: its memory stays bounded however many rows are stored. */
const KEYS_PER_PART = 2_000_000;

/** Rows stored up to `builtTo` without a leaf, and second rows of a key, a slice of the keys (by hash) at a time. */
async function unlogged(ch: ClickHouseDoor, kind: LeafKind, builtTo: number): Promise<Finding[]> {
  const [c] = await ch.select<{ n: string }>('SELECT count() AS n FROM {db:Identifier}.audit_log_leaves WHERE kind = {kind:String}', { kind });
  const parts = Math.max(1, Math.ceil(Number(c?.n ?? 0) / KEYS_PER_PART));
  const rows: Array<{ key: string; part: string; n: string; logged: string }> = [];
  for (let part = 0; part < parts; part++) {
    const mine = 'cityHash64(record_key) % {parts:UInt64} = {part:UInt64}';
    rows.push(
      ...(await ch.select<{ key: string; part: string; n: string; logged: string }>(
        `SELECT r.record_key AS key, r.part AS part, r.n AS n, toUInt8(l.record_key != '') AS logged
         FROM (SELECT record_key, arrayStringConcat(groupUniqArray(part), ', ') AS part, count() AS n FROM (${leafSelect(kind, `${storedColumn(kind)} <= {to:DateTime64(3)}`)}) WHERE ${mine} GROUP BY record_key) AS r
         LEFT JOIN (SELECT DISTINCT record_key FROM {db:Identifier}.audit_log_leaves WHERE kind = {kind:String} AND ${mine}) AS l ON l.record_key = r.record_key
         WHERE l.record_key = '' OR r.n > 1
         ORDER BY key`,
        { kind, to: chTime(builtTo), parts, part },
        { join_use_nulls: 0 },
      )),
    );
  }
  return rows.map((r) =>
    Number(r.logged) === 1
      ? { what: 'inserted' as const, kind, key: r.key, part: r.part, detail: `${kind} ${r.key} is stored ${r.n} times (part ${r.part}): one has the leaf, another was inserted` }
      : { what: 'inserted' as const, kind, key: r.key, part: r.part, detail: `${kind} ${r.key} in part ${r.part} was stored before the log's head and has no leaf` },
  );
}
