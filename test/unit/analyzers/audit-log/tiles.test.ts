/**
 * Range hashes from stored tiles equal RFC 9162's tree hash of the same leaves: over 70,000
 * leaves (complete subtrees of 2^8 and 2^16 and a ragged right edge), for the whole tree, for
 * ranges an inclusion or consistency proof asks for, and as proofs that verify. The oracle is
 * rootOf over the leaves themselves (schemas/merkle.ts, tested against MTH as the RFC writes it).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { rangeHasher, type TileReader } from '../../../../analyzers/audit-log/tiles.ts';
import { consistencyPath, inclusionPath, rootOf, verifyConsistency, verifyInclusion } from '../../../../schemas/merkle.ts';

const N = 70_000;
const leaves = Array.from({ length: N }, (_, i) => createHash('sha256').update(`leaf ${i}`).digest());
const nodes = new Map<number, Buffer[]>();
for (const level of [8, 16]) {
  const size = 2 ** level;
  nodes.set(level, Array.from({ length: Math.floor(N / size) }, (_, b) => rootOf(leaves.slice(b * size, (b + 1) * size))));
}
let reads = 0;
const reader: TileReader = {
  leaves: async (a, b) => ((reads += b - a), leaves.slice(a, b)),
  nodes: async (level, a, b) => ((reads += b - a), (nodes.get(level) ?? []).slice(a, b)),
};

describe('audit log tiles', () => {
  it('hash any proof range as the leaves do, reading at most ~255 stored hashes per level', async () => {
    const hash = rangeHasher(reader);
    for (const [a, b] of [[0, N], [0, 65_536], [65_536, N], [256, 512], [68_864, N], [3, 4], [0, 69_999]] as const) {
      reads = 0;
      expect((await hash(a, b)).equals(rootOf(leaves.slice(a, b))), `[${a}, ${b})`).toBe(true);
      if (a % 256 === 0) expect(reads, `[${a}, ${b})`).toBeLessThanOrEqual(3 * 256);
    }
    const root = rootOf(leaves);
    for (const i of [0, 1, 255, 256, 65_535, 65_536, 69_999, 31_337]) {
      const path = await inclusionPath(i, N, hash);
      expect(verifyInclusion(i, N, leaves[i] as Buffer, path, root)).toBe(true);
    }
    const old = 65_600;
    expect(verifyConsistency(old, N, rootOf(leaves.slice(0, old)), root, await consistencyPath(old, N, hash))).toBe(true);
  });

  it('refuses to answer from a log that lacks what it needs', async () => {
    const hash = rangeHasher({ ...reader, nodes: async () => [] });
    await expect(hash(0, N)).rejects.toThrow(/lacks level-16 roots/);
  });
});
