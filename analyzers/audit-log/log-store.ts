/**
 * Reads of the audit log's tables: stored hashes for {@link rangeHasher}, signed heads, and a
 * record's leaf by its key.
 */
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';

/** A SELECT of the log's tables ({db:Identifier} bound by the caller): the door's, or a read route's. */
export type LogSelect = <T>(sql: string, params?: Record<string, unknown>) => Promise<T[]>;

/** The door's select as a {@link LogSelect}. */
export const doorSelect =
  (ch: ClickHouseDoor): LogSelect =>
  (sql, params) =>
    ch.select(sql, params);
import type { TreeHead } from './heads.ts';
import type { LeafKind } from './leaf-sql.ts';
import type { FetchedHashes, TileReader, TileReads } from './tiles.ts';

/** Stored leaf hashes and subtree roots, as a {@link TileReader}. */
export function logTiles(sel: LogSelect): TileReader {
  return {
    async leaves(from, to) {
      const rows = await sel<{ h: string }>(
        'SELECT lower(hex(leaf_hash)) AS h FROM {db:Identifier}.audit_log_leaves WHERE leaf_index >= {from:UInt64} AND leaf_index < {to:UInt64} ORDER BY leaf_index LIMIT 1 BY leaf_index',
        { from, to },
      );
      return rows.map((r) => Buffer.from(r.h, 'hex'));
    },
    async nodes(level, from, to) {
      const rows = await sel<{ h: string }>(
        'SELECT hash AS h FROM {db:Identifier}.audit_log_nodes WHERE level = {level:UInt8} AND node_index >= {from:UInt64} AND node_index < {to:UInt64} ORDER BY node_index LIMIT 1 BY node_index',
        { level, from, to },
      );
      return rows.map((r) => Buffer.from(r.h, 'hex'));
    },
  };
}

/** Leaves in the log (their indexes are 0 … n-1): the size of the tree the builder signs. */
export async function leafCount(ch: ClickHouseDoor): Promise<number> {
  const [r] = await ch.select<{ n: string }>('SELECT count() AS n FROM {db:Identifier}.audit_log_leaves');
  return Number(r?.n ?? 0);
}

const HEAD_COLUMNS = `tree_size, root_hash, toUnixTimestamp64Milli(built_to) AS built_to_ms, toUnixTimestamp64Milli(signed_at) AS signed_at_ms, key_id, signature, public_key, checkpoint`;
type HeadRow = Omit<TreeHead, 'tree_size' | 'built_to_ms' | 'signed_at_ms'> & { tree_size: string; built_to_ms: string; signed_at_ms: string; public_key: string; checkpoint: string };
/** A head as stored: with the public key it was signed with, and its signed checkpoint note when it has one. */
export type StoredHead = TreeHead & { public_key: string; checkpoint?: string };
const toHead = ({ checkpoint, ...r }: HeadRow): StoredHead => ({
  ...r,
  tree_size: Number(r.tree_size),
  built_to_ms: Number(r.built_to_ms),
  signed_at_ms: Number(r.signed_at_ms),
  ...(checkpoint ? { checkpoint } : {}),
});

/** The newest signed head, or undefined before the first. */
export async function latestHead(sel: LogSelect): Promise<StoredHead | undefined> {
  const [r] = await sel<HeadRow>(`SELECT ${HEAD_COLUMNS} FROM {db:Identifier}.audit_log_heads ORDER BY tree_size DESC, signed_at DESC LIMIT 1`);
  return r ? toHead(r) : undefined;
}

/** Signed heads with tree_size in [from, to], oldest first (at most `limit`). */
export async function headsBetween(sel: LogSelect, from: number, to: number, limit: number): Promise<StoredHead[]> {
  const rows = await sel<HeadRow>(
    `SELECT ${HEAD_COLUMNS} FROM {db:Identifier}.audit_log_heads WHERE tree_size >= {from:UInt64} AND tree_size <= {to:UInt64} ORDER BY tree_size, signed_at LIMIT 1 BY tree_size LIMIT {limit:UInt64}`,
    { from, to, limit },
  );
  return rows.map(toHead);
}

/** Where to look for a leaf: at the record's storage time or its created_at (epoch ms), or anywhere. */
export type LeafPlace = { storedMs: number } | { createdMs: number } | undefined;

// At a created_at, the leaf indexes of that instant come from the projection by created_at (a
// primary-key read of it, then of the log); the min/max index on stored_at serves the rest.
const LEAF_AT_CREATED =
  "leaf_index IN (SELECT leaf_index FROM {db:Identifier}.audit_log_leaves WHERE created_at = fromUnixTimestamp64Milli({at:Int64}, 'UTC')) AND ";

/**
 * A record's leaf: its index and hash (hex), or undefined when it has none (yet). At a storage
 * time or a created_at the leaves' min/max indexes find the granules of that instant (leaves are
 * in storage order, which created_at follows closely); without a place every leaf of the kind is
 * scanned, for a row whose times no longer match its leaf.
 */
export async function leafOf(sel: LogSelect, kind: LeafKind, key: string, place?: LeafPlace): Promise<{ index: number; hash: string } | undefined> {
  const column = place === undefined ? undefined : 'storedMs' in place ? 'stored_at' : 'created_at';
  const at = place === undefined ? undefined : 'storedMs' in place ? place.storedMs : place.createdMs;
  const where = column === 'created_at' ? LEAF_AT_CREATED : column ? `${column} = fromUnixTimestamp64Milli({at:Int64}, 'UTC') AND ` : '';
  const [r] = await sel<{ i: string; h: string }>(
    `SELECT leaf_index AS i, lower(hex(leaf_hash)) AS h FROM {db:Identifier}.audit_log_leaves
     WHERE ${where}kind = {kind:String} AND record_key = {key:String} ORDER BY leaf_index LIMIT 1`,
    { kind, key, ...(at === undefined ? {} : { at }) },
  );
  return r ? { index: Number(r.i), hash: r.h } : undefined;
}

/**
 * Every hash of `reads` in one statement, leaves and nodes each naming their indexes as a set (`IN`
 * an array: the primary key is searched once per set; an OR of index ranges was analysed range by
 * range, 9 ms a proof against 4.5), by leaf index and by `level/index`: a proof in a tree of
 * millions needs ~25 ranges, ~1,000 hashes, and a statement per range cost ~90 ms a proof on the
 * embedded engine.
 * One UNION ALL rather than two statements: the embedded engine runs statements with parameters one
 * at a time (two cost ~3 ms more at 10 M calls); a server runs both branches side by side either way.
 */
export async function fetchHashes(sel: LogSelect, reads: TileReads): Promise<FetchedHashes> {
  const leafIndexes: number[] = [];
  for (const [a, b] of reads.leaves) for (let i = a; i < b; i++) leafIndexes.push(i);
  const levels: number[] = [];
  const nodeIndexes: number[] = [];
  for (const [level, a, b] of reads.nodes) {
    for (let i = a; i < b; i++) {
      levels.push(level);
      nodeIndexes.push(i);
    }
  }
  const leafSql = "SELECT 'leaf' AS t, toUInt8(0) AS l, leaf_index AS i, lower(hex(leaf_hash)) AS h FROM {db:Identifier}.audit_log_leaves WHERE leaf_index IN {ix:Array(UInt64)} LIMIT 1 BY leaf_index";
  const nodeSql = "SELECT 'node' AS t, level AS l, node_index AS i, hash AS h FROM {db:Identifier}.audit_log_nodes WHERE (level, node_index) IN arrayZip({lv:Array(UInt8)}, {nx:Array(UInt64)}) LIMIT 1 BY level, node_index";
  const parts = [...(leafIndexes.length ? [leafSql] : []), ...(nodeIndexes.length ? [nodeSql] : [])];
  const rows = parts.length ? await sel<{ t: string; l: string; i: string; h: string }>(parts.join(' UNION ALL '), { ix: leafIndexes, lv: levels, nx: nodeIndexes }) : [];
  const leaves = new Map<number, Buffer>();
  const nodes = new Map<string, Buffer>();
  for (const r of rows) {
    if (r.t === 'leaf') leaves.set(Number(r.i), Buffer.from(r.h, 'hex'));
    else nodes.set(`${r.l}/${r.i}`, Buffer.from(r.h, 'hex'));
  }
  return { leaves, nodes };
}
