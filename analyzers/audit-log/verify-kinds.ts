/**
 * The first check of `verify`'s records: per kind, are the rows stored exactly the leaves logged?
 * One scan of the kind's table in its own order, one of its leaves, compared as multisets of
 * leaf hashes. A kind found so is done; any other is joined with its leaves slice by slice
 * (verify.ts), which names each record that is not as the log says.
 *
 * Why a scan and not slices: rows are stored in task or tool order, so the rows of a slice of
 * storage time lie in every granule of their month, and each slice read the whole table again
 * (10 M calls: 110 s for 24 slices; the scans here 19 s).
 *
 * How two multisets of ~10 M hashes are compared in bounded memory, whatever their order: by a
 * count and a sum (mod 2^128) of a keyed pseudo-random function of each hash, SipHash-2-4 under a
 * 128-bit key drawn by ClickHouse inside the statement. Two multisets that differ give the same
 * sum with probability ~2^-128 under a key chosen after the rows were written. The key never
 * leaves the engine (it is in no statement text, no log, no parameter): someone watching
 * system.processes or query_log cannot aim forged rows at it. An unkeyed sum would not do: sums
 * of public hashes can be matched by chosen rows (Wagner's generalized birthday attack).
 */
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { chTime } from '../../platform/clickhouse/statement.ts';
import { createdColumn, leafSelect, storedColumn, type LeafKind } from './leaf-sql.ts';

/** What the kinds are checked against: the log's size, rows stored before `hi`, retention per kind. */
export interface KindsCheck {
  /** Leaves [0, size) are the log. */
  size: number;
  /** Rows stored before this (epoch ms) are in the log: after the last leaf's and the head's built_to. */
  hi: number;
  /** A leaf whose record was created before this (epoch ms) may have lost its row to retention. */
  expiredBefore: (kind: LeafKind) => number;
}

/** Leaves per statement of the duplicate-key check (the statement's memory is a set of this many keys). */
const CHUNK = 1_000_000;
/** Rows past retention still stored (not yet removed by a merge) beyond which a kind is joined instead. */
const MAX_PENDING_EXPIRY = 1_000_000;

/**
 * The kinds whose rows are not exactly their leaves, to be joined slice by slice (all of them when
 * some record has two leaves: a key stored twice and logged twice, which the join reports), and
 * the leaves of the intact kinds that retention took.
 */
export async function kindsToJoin(ch: ClickHouseDoor, kinds: readonly LeafKind[], o: KindsCheck): Promise<{ join: LeafKind[]; expired: number }> {
  if (await twiceLogged(ch, o.size)) return { join: [...kinds], expired: 0 };
  const join: LeafKind[] = [];
  let expired = 0;
  for (const kind of kinds) {
    const r = await kindIntact(ch, kind, o);
    if (r.intact) expired += r.expired;
    else join.push(kind);
  }
  return { join, expired };
}

/** Whether some chunk of the log holds two leaves of one record (counted by a 64-bit hash of kind and key: a collision only sends the log to the join). */
async function twiceLogged(ch: ClickHouseDoor, size: number): Promise<boolean> {
  for (let a = 0; a < size; a += CHUNK) {
    const [r] = await ch.select<{ d: string }>(
      'SELECT count() - uniqExact(cityHash64(kind, record_key)) AS d FROM {db:Identifier}.audit_log_leaves WHERE leaf_index >= {a:UInt64} AND leaf_index < {b:UInt64}',
      { a, b: Math.min(size, a + CHUNK) },
    );
    if (Number(r?.d ?? 0) > 0) return true;
  }
  return false;
}

/**
 * Whether a kind's rows stored before `hi` are, as a multiset of leaf hashes, its leaves — less
 * the leaves retention may have taken: those created before the kind's retention limit count
 * only when a row still stored has their hash (rows past the limit not yet removed); the others
 * (side 2) were taken by retention.
 */
async function kindIntact(ch: ClickHouseDoor, kind: LeafKind, o: KindsCheck): Promise<{ intact: boolean; expired: number }> {
  const stored = `${storedColumn(kind)} < {hi:DateTime64(3)}`;
  const e = o.expiredBefore(kind);
  const params: Record<string, unknown> = { kind, size: o.size, hi: chTime(o.hi) };
  const logged = 'kind = {kind:String} AND leaf_index < {size:UInt64}';
  let kept = 'true';
  if (Number.isFinite(e)) {
    const old = `${stored} AND ${createdColumn(kind)} < {e:DateTime64(3)}`;
    params.e = chTime(e);
    const [pending] = await ch.select<{ n: string }>(`SELECT count() AS n FROM (${leafSelect(kind, old)})`, params);
    if (Number(pending?.n ?? 0) > MAX_PENDING_EXPIRY) return { intact: false, expired: 0 };
    kept = `created_at >= {e:DateTime64(3)} OR leaf_hash IN (SELECT leaf_hash FROM (${leafSelect(kind, old)}))`;
  }
  const sides = await ch.select<{ side: string; n: string; s: string }>(
    `WITH (SELECT (rand64(), rand64())) AS key
     SELECT side, count() AS n, toString(sum(reinterpretAsUInt128(sipHash128Keyed(key, h)))) AS s FROM (
       SELECT if(${kept}, 0, 2) AS side, leaf_hash AS h FROM {db:Identifier}.audit_log_leaves WHERE ${logged}
       UNION ALL SELECT 1 AS side, leaf_hash AS h FROM (${leafSelect(kind, stored)})
     ) GROUP BY side`,
    params,
  );
  const of = (side: number) => sides.find((r) => Number(r.side) === side) ?? { n: '0', s: '0' };
  return { intact: of(0).n === of(1).n && of(0).s === of(1).s, expired: Number(of(2).n) };
}
