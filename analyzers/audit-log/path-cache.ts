/**
 * Inclusion paths against one signed head, reading only what differs from one proof to the next.
 * Of the ~1,000 hashes a path in a tree of millions needs, most are shared by every proof against
 * the same head: the subtree roots of level 16 and above (one per 65,536 leaves), and the hashes of
 * the ranges that end at the tree's size (the right edge, whose leaves and level-8 roots are not
 * gathered under any stored root). Only the leaf's own block of 256 leaves and its group of 256
 * level-8 roots are its alone. Those shared hashes are kept for the newest head seen, and dropped
 * when another head is asked for: what is kept is derived from that head's stored hashes, so a
 * history rebuilt since cannot be served from it. Pure: the caller's `fetch` reads the hashes.
 *
 * Memory: one entry per 65,536 leaves (plus one per 2^24) and at most one per level of the tree for
 * the right edge: ~15,000 entries, a few MB, at a billion leaves.
 */
import { inclusionRanges } from '../../schemas/merkle.ts';
import { memoryTiles, planReads, rangeHasher, TILE_LEVELS, type FetchedHashes, type HashLookup, type TileReads } from './tiles.ts';

/** Reads the hashes of `reads` (log-store.ts's fetchHashes on a statement runner). */
export type FetchHashes = (reads: TileReads) => Promise<FetchedHashes>;

/** The signed head a path is computed against. */
export interface PathHead {
  tree_size: number;
  root_hash: string;
}

/** Inclusion paths with the hashes all proofs against one head share kept in memory. */
export interface PathCache {
  /** RFC 9162 inclusion path of leaf `index` in the tree of `head`, bottom first. */
  inclusionPath(head: PathHead, index: number, fetch: FetchHashes): Promise<Buffer[]>;
}

/** Subtree roots held for every proof: the stored levels from this one up. */
const SHARED_LEVEL = 16;

interface HeadState {
  key: string;
  /** `level/index` → stored root, every level ≥ SHARED_LEVEL; filled by the head's first proof. */
  upper: Map<string, Buffer> | undefined;
  /** start → hash of [start, tree_size). */
  edges: Map<number, Buffer>;
}

/** A path cache of its own (one per read-query set: no state shared between databases). */
export function createPathCache(): PathCache {
  let state: HeadState = { key: '', upper: undefined, edges: new Map() };
  return {
    async inclusionPath(head, index, fetch) {
      const size = head.tree_size;
      const key = `${size}/${head.root_hash}`;
      // A proof keeps the state it began with: another head arriving meanwhile replaces it, never mixes with it.
      const st = state.key === key ? state : { key, upper: undefined, edges: new Map<number, Buffer>() };
      state = st;
      const ranges = inclusionRanges(index, size);
      const todo = ranges.filter(([a, b]) => !(b === size && st.edges.has(a)));
      const reads = planReads(todo);
      const upperHeld = st.upper !== undefined;
      const mine = reads.nodes.filter(([level]) => level < SHARED_LEVEL);
      // The head's first proof reads every shared root at once (one set per level in its statement).
      const shared: TileReads['nodes'] = upperHeld ? [] : TILE_LEVELS.filter((l) => l >= SHARED_LEVEL).map((l) => [l, 0, Math.floor(size / 2 ** l)]);
      const fetched = await fetch({ leaves: reads.leaves, nodes: [...mine, ...shared.filter(([, a, b]) => b > a)] });
      if (!upperHeld) st.upper = new Map([...fetched.nodes].filter(([k]) => Number(k.slice(0, k.indexOf('/'))) >= SHARED_LEVEL));
      const upper = st.upper ?? new Map<string, Buffer>();
      const nodes: HashLookup<string> = { get: (k) => fetched.nodes.get(k) ?? upper.get(k) };
      const hash = rangeHasher(memoryTiles(fetched.leaves, nodes));
      return Promise.all(
        ranges.map(async ([a, b]) => {
          if (b !== size) return hash(a, b);
          const held = st.edges.get(a);
          if (held) return held;
          const h = await hash(a, b);
          st.edges.set(a, h);
          return h;
        }),
      );
    },
  };
}
