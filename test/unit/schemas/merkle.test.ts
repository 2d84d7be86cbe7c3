/**
 * The audit log's Merkle tree against RFC 9162 written out here as the oracle: MTH by its recursive
 * definition, over every size up to 70 (odd edges, powers of two and one past them). Inclusion and
 * consistency proofs made by schemas/merkle.ts verify, and any changed byte, index, size or root
 * makes them fail. The empty tree's root and a two-leaf root are RFC 9162's own values.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { consistencyPath, inclusionPath, leafHash, nodeHash, rootOf, verifyConsistency, verifyInclusion } from '../../../schemas/merkle.ts';

const sha = (...parts: Uint8Array[]) => parts.reduce((h, p) => h.update(p), createHash('sha256')).digest();
/** RFC 9162 §2.1.1, as written there. */
function mth(d: Buffer[]): Buffer {
  if (d.length === 0) return sha();
  if (d.length === 1) return sha(Buffer.from([0]), d[0] as Buffer);
  let k = 1;
  while (k * 2 < d.length) k *= 2;
  return sha(Buffer.from([1]), mth(d.slice(0, k)), mth(d.slice(k)));
}
const data = (n: number) => Array.from({ length: n }, (_, i) => Buffer.from(`leaf ${i} ü`));
const flip = (b: Uint8Array) => {
  const c = Buffer.from(b);
  c[0] = (c[0] as number) ^ 1;
  return c;
};

describe('Merkle tree (RFC 9162)', () => {
  it('hashes leaves and nodes with their prefixes, and roots every size as MTH does', () => {
    expect(rootOf([]).toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(leafHash('x')).toEqual(sha(Buffer.from([0]), Buffer.from('x')));
    expect(nodeHash(Buffer.from('a'), Buffer.from('b'))).toEqual(sha(Buffer.from([1, 0x61, 0x62])));
    for (let n = 1; n <= 70; n++) expect(rootOf(data(n).map((d) => leafHash(d)))).toEqual(mth(data(n)));
  });

  it('proves every leaf of every tree up to 70, and no changed proof verifies', async () => {
    for (let n = 1; n <= 70; n++) {
      const d = data(n);
      const range = async (a: number, b: number) => mth(d.slice(a, b));
      const root = mth(d);
      for (let i = 0; i < n; i++) {
        const path = await inclusionPath(i, n, range);
        const leaf = leafHash(d[i] as Buffer);
        expect(verifyInclusion(i, n, leaf, path, root)).toBe(true);
        expect(verifyInclusion(i, n, flip(leaf), path, root)).toBe(false);
        if (path.length) expect(verifyInclusion(i, n, leaf, [flip(path[0] as Buffer), ...path.slice(1)], root)).toBe(false);
        if (n > 1) expect(verifyInclusion((i + 1) % n, n, leaf, path, root)).toBe(false);
        // (A path does not fix the size by itself — the signed head binds size and root — but another tree's root fails.)
        expect(verifyInclusion(i, n, leaf, path, mth(data(n + 1)))).toBe(false);
      }
    }
  });

  it('proves every earlier tree a prefix of every later one up to 40, and nothing else', async () => {
    const d = data(40);
    const range = async (a: number, b: number) => mth(d.slice(a, b));
    for (let m = 1; m <= 40; m++) {
      for (let n = m; n <= 40; n++) {
        const proof = await consistencyPath(m, n, range);
        const [r1, r2] = [mth(d.slice(0, m)), mth(d.slice(0, n))];
        expect(verifyConsistency(m, n, r1, r2, proof), `${m} → ${n}`).toBe(true);
        if (m < n) {
          expect(verifyConsistency(m, n, flip(r1), r2, proof)).toBe(false);
          expect(verifyConsistency(m, n, r1, flip(r2), proof)).toBe(false);
          // A rewritten history: the later tree with one earlier leaf changed.
          const forged = [...d.slice(0, n)];
          forged[m - 1] = Buffer.from('forged');
          expect(verifyConsistency(m, n, r1, mth(forged), await consistencyPath(m, n, async (a, b) => mth(forged.slice(a, b))))).toBe(false);
        }
      }
    }
  });
});
