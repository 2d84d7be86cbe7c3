/**
 * The audit log's Merkle tree, as Certificate Transparency defines it (RFC 9162 §2.1): leaf hash
 * SHA-256(0x00 ‖ leaf), node hash SHA-256(0x01 ‖ left ‖ right), the root of n leaves split at the
 * largest power of two below n. Inclusion and consistency proofs are made from subtree hashes the
 * caller supplies (the log keeps some, computes the rest) and verified with nothing but the proof:
 * what `tool-audit verify-proof` runs offline. Pure (node:crypto only).
 */
import { createHash } from 'node:crypto';

/** SHA-256(0x00 ‖ data): a leaf's hash. */
export function leafHash(data: Uint8Array | string): Buffer {
  return createHash('sha256').update(Buffer.from([0])).update(data).digest();
}

/** SHA-256(0x01 ‖ left ‖ right): an inner node's hash. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256').update(Buffer.from([1])).update(left).update(right).digest();
}

/** The largest power of two strictly below n (n ≥ 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** The root of a list of leaf hashes (the empty tree: SHA-256 of nothing). */
export function rootOf(leaves: readonly Uint8Array[]): Buffer {
  if (leaves.length === 0) return createHash('sha256').digest();
  // Bottom-up, one level at a time: an odd last node is carried up, which gives RFC 9162's tree.
  let level: readonly Uint8Array[] = leaves;
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(nodeHash(level[i] as Uint8Array, level[i + 1] as Uint8Array));
    if (level.length % 2 === 1) next.push(level[level.length - 1] as Uint8Array);
    level = next;
  }
  return Buffer.from(level[0] as Uint8Array);
}

/** Hash of the leaves [start, end) of the tree; what proofs are made of. */
export type RangeHash = (start: number, end: number) => Promise<Buffer>;

/** The leaf ranges whose hashes make the inclusion path of leaf `index` in a tree of `size` (RFC 9162 §2.1.3.1), bottom first. */
export function inclusionRanges(index: number, size: number): Array<[number, number]> {
  if (!(index >= 0 && index < size)) throw new RangeError(`leaf ${index} is not in a tree of ${size}`);
  const steps: Array<[number, number]> = [];
  let [lo, hi, m] = [0, size, index];
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (m < k) {
      steps.push([lo + k, hi]);
      hi = lo + k;
    } else {
      steps.push([lo, lo + k]);
      m -= k;
      lo += k;
    }
  }
  return steps.reverse();
}

/** The inclusion path of leaf `index` in the tree of `size` leaves, bottom first (the ranges are independent: asked for at once). */
export function inclusionPath(index: number, size: number, range: RangeHash): Promise<Buffer[]> {
  return Promise.all(inclusionRanges(index, size).map(([a, b]) => range(a, b)));
}

/** The consistency proof from the tree of `from` leaves to the tree of `to` (RFC 9162 §2.1.4.1). */
export async function consistencyPath(from: number, to: number, range: RangeHash): Promise<Buffer[]> {
  if (!(from > 0 && from <= to)) throw new RangeError(`no consistency proof from ${from} to ${to}`);
  const out: Buffer[] = [];
  // SUBPROOF(m, D[lo:hi], b), iteratively; the nodes are collected top-down, then reversed.
  let [lo, hi, m, b] = [0, to, from, true];
  while (m !== hi - lo) {
    const k = splitPoint(hi - lo);
    if (m <= k) {
      out.push(await range(lo + k, hi));
      hi = lo + k;
    } else {
      out.push(await range(lo, lo + k));
      lo += k;
      m -= k;
      b = false;
    }
  }
  if (!b) out.push(await range(lo, hi));
  return out.reverse();
}

const eq = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

/** True when `path` proves leaf hash `leaf` at `index` in the tree of `size` leaves with root `root` (RFC 9162 §2.1.3.2). */
export function verifyInclusion(index: number, size: number, leaf: Uint8Array, path: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!(index >= 0 && index < size)) return false;
  let fn = index;
  let sn = size - 1;
  let r: Buffer = Buffer.from(leaf);
  for (const p of path) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && eq(r, root);
}

/** True when `proof` shows the tree of `from` leaves (root `fromRoot`) is a prefix of the tree of `to` (root `toRoot`) (RFC 9162 §2.1.4.2). */
export function verifyConsistency(from: number, to: number, fromRoot: Uint8Array, toRoot: Uint8Array, proof: readonly Uint8Array[]): boolean {
  if (from === to) return proof.length === 0 && eq(fromRoot, toRoot);
  if (!(from > 0 && from < to) || proof.length === 0) return false;
  const nodes = (from & (from - 1)) === 0 ? [fromRoot, ...proof] : [...proof];
  let fn = from - 1;
  let sn = to - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr: Buffer = Buffer.from(nodes[0] as Uint8Array);
  let sr: Buffer = Buffer.from(nodes[0] as Uint8Array);
  for (const c of nodes.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && eq(fr, fromRoot) && eq(sr, toRoot);
}
