/**
 * Hashes of any range of the audit log's leaves from what is stored: the leaves' hashes, and the
 * roots of complete, aligned subtrees of 2^8, 2^16 and 2^24 leaves (audit_log_nodes). A range
 * starting at a multiple of 2^L is its complete 2^L-blocks' roots and the hash of what follows,
 * combined as RFC 9162's tree combines them, so any hash a proof or a tree head needs reads at
 * most 255 stored hashes per level. Pure: the reads are the caller's.
 */
import { rootOf, type RangeHash } from '../../schemas/merkle.ts';
import { AppError } from '../../platform/errors.ts';

/** Levels whose complete subtrees' roots are stored. */
export const TILE_LEVELS = [24, 16, 8] as const;

/** Reads of stored hashes, by index range [from, to). */
export interface TileReader {
  leaves(from: number, to: number): Promise<Buffer[]>;
  nodes(level: number, from: number, to: number): Promise<Buffer[]>;
}

/** The hash of leaves [a, b) from stored tiles. */
export function rangeHasher(r: TileReader): RangeHash {
  const hash = async (a: number, b: number): Promise<Buffer> => {
    if (!(a >= 0 && b > a)) throw new RangeError(`no hash of the empty range [${a}, ${b})`);
    for (const level of TILE_LEVELS) {
      const size = 2 ** level;
      if (a % size !== 0 || b - a < size) continue;
      const blocks = Math.floor((b - a) / size);
      const parts = await r.nodes(level, a / size, a / size + blocks);
      if (parts.length !== blocks) throw new AppError('INTEGRITY', `the audit log lacks level-${level} roots ${a / size}..${a / size + blocks - 1} (has ${parts.length})`, { retryable: false });
      if (a + blocks * size < b) parts.push(await hash(a + blocks * size, b));
      return rootOf(parts);
    }
    const leaves = await r.leaves(a, b);
    if (leaves.length !== b - a) throw new AppError('INTEGRITY', `the audit log lacks leaves ${a}..${b - 1} (has ${leaves.length})`, { retryable: false });
    return rootOf(leaves);
  };
  return hash;
}

/** The stored hashes a set of range hashes reads: leaf ranges and (level, from, to) node ranges. */
export interface TileReads {
  leaves: Array<[number, number]>;
  nodes: Array<[number, number, number]>;
}

/** What {@link rangeHasher} reads for each range, without reading it (to fetch it all at once). */
export function planReads(ranges: ReadonlyArray<readonly [number, number]>): TileReads {
  const out: TileReads = { leaves: [], nodes: [] };
  const plan = (a: number, b: number): void => {
    for (const level of TILE_LEVELS) {
      const size = 2 ** level;
      if (a % size !== 0 || b - a < size) continue;
      const blocks = Math.floor((b - a) / size);
      out.nodes.push([level, a / size, a / size + blocks]);
      if (a + blocks * size < b) plan(a + blocks * size, b);
      return;
    }
    out.leaves.push([a, b]);
  };
  for (const [a, b] of ranges) plan(a, b);
  return out;
}

/** Hashes looked up by key: a Map, or a view over several. */
export type HashLookup<K> = Pick<ReadonlyMap<K, Buffer>, 'get'>;

/** Stored hashes as fetched: leaf index → hash, `level/index` → hash. */
export interface FetchedHashes {
  leaves: Map<number, Buffer>;
  nodes: Map<string, Buffer>;
}

/** A {@link TileReader} over hashes already fetched (leaf index → hash, `level/index` → hash). */
export function memoryTiles(leaves: HashLookup<number>, nodes: HashLookup<string>): TileReader {
  const pick = <K>(m: HashLookup<K>, keys: K[]) => keys.flatMap((k) => {
    const h = m.get(k);
    return h ? [h] : [];
  });
  const span = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);
  return {
    leaves: async (a, b) => pick(leaves, span(a, b)),
    nodes: async (level, a, b) => pick(nodes, span(a, b).map((i) => `${level}/${i}`)),
  };
}

