/**
 * Inclusion paths through the path cache verify against RFC 9162 roots of the leaves themselves
 * (schemas/merkle.ts's rootOf and verifyInclusion, tested against MTH as the RFC writes it), for
 * leaves all over a tree of 70,000 (a complete level-16 subtree and a ragged right edge), and
 * read only the leaf's own block and group once the head's shared hashes are held. A new head —
 * larger, or of the same size over other leaves, as after a rebuilt history — is never answered
 * from what was kept for the last.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPathCache, type FetchHashes } from '../../../../analyzers/audit-log/path-cache.ts';
import { rootOf, verifyInclusion } from '../../../../schemas/merkle.ts';

const N = 70_000;

/** A stored log over `leaves`: its leaf hashes and level-8/16 roots, and a fetch that counts what it reads. */
function storedLog(leaves: Buffer[]) {
  const nodes = new Map<string, Buffer>();
  for (const level of [8, 16]) {
    const size = 2 ** level;
    for (let b = 0; b < Math.floor(leaves.length / size); b++) nodes.set(`${level}/${b}`, rootOf(leaves.slice(b * size, (b + 1) * size)));
  }
  const read = { leaves: 0, level8: 0, level16: 0, statements: 0 };
  const fetch: FetchHashes = async (reads) => {
    read.statements++;
    const out = { leaves: new Map<number, Buffer>(), nodes: new Map<string, Buffer>() };
    for (const [a, b] of reads.leaves) {
      for (let i = a; i < b && i < leaves.length; i++) out.leaves.set(i, leaves[i] as Buffer);
      read.leaves += b - a;
    }
    for (const [level, a, b] of reads.nodes) {
      for (let i = a; i < b; i++) {
        const h = nodes.get(`${level}/${i}`);
        if (h) out.nodes.set(`${level}/${i}`, h);
      }
      if (level === 8) read.level8 += b - a;
      else read.level16 += b - a;
    }
    return out;
  };
  return { fetch, read };
}

const leafHashes = (n: number, salt: string) => Array.from({ length: n }, (_, i) => createHash('sha256').update(`${salt} ${i}`).digest());
const headOf = (leaves: Buffer[], size: number) => ({ tree_size: size, root_hash: rootOf(leaves.slice(0, size)).toString('hex') });

describe('audit log path cache', () => {
  const leaves = leafHashes(N, 'leaf');
  const head = headOf(leaves, N);

  it('answers paths that verify, reading only the leaf’s own block and group once the head’s shared hashes are held', async () => {
    const { fetch, read } = storedLog(leaves);
    const cache = createPathCache();
    const indexes = [0, 1, 255, 256, 65_535, 65_536, 69_999, 69_888, 69_000, 37_777, 12_345, 3];
    for (const [n, i] of indexes.entries()) {
      Object.assign(read, { leaves: 0, level8: 0, level16: 0, statements: 0 });
      const path = await cache.inclusionPath(head, i, fetch);
      expect(verifyInclusion(i, N, leaves[i] as Buffer, path, Buffer.from(head.root_hash, 'hex')), `leaf ${i}`).toBe(true);
      expect(read.statements, `leaf ${i}`).toBe(1);
      if (n === 0) expect(read.level16, 'the first proof reads every level-16 root').toBe(Math.floor(N / 65_536));
      else {
        // In the last, incomplete group the right edge splits anew for the first leaves asking
        // (its partial block and group once more); once held, a leaf reads its own alone.
        const edge = i >= 65_536 && n <= indexes.indexOf(69_999) ? 2 : 1;
        expect(read.level16, `leaf ${i}`).toBe(0);
        expect(read.leaves, `leaf ${i}`).toBeLessThanOrEqual(255 * edge);
        expect(read.level8, `leaf ${i}`).toBeLessThanOrEqual(255 * edge);
      }
    }
  });

  it('never answers a new head from what was kept for the last: a rebuilt tree of the same size, and a grown one', async () => {
    const cache = createPathCache();
    const first = storedLog(leaves);
    await cache.inclusionPath(head, 40_000, first.fetch);
    // Another history of the same size (other leaves, as after a rewrite): its own roots, not the kept ones.
    const other = leafHashes(N, 'rewritten');
    const otherLog = storedLog(other);
    const otherHead = headOf(other, N);
    for (const i of [40_000, 69_999]) {
      const path = await cache.inclusionPath(otherHead, i, otherLog.fetch);
      expect(verifyInclusion(i, N, other[i] as Buffer, path, Buffer.from(otherHead.root_hash, 'hex')), `rewritten, leaf ${i}`).toBe(true);
    }
    expect(otherLog.read.level16).toBe(Math.floor(N / 65_536));
    // The same log grown: the right edge moved, and every proof still verifies against the new root.
    const grown = leafHashes(N + 3_000, 'leaf');
    const grownLog = storedLog(grown);
    const grownHead = headOf(grown, N + 3_000);
    for (const i of [40_000, 72_999, 5]) {
      const path = await cache.inclusionPath(grownHead, i, grownLog.fetch);
      expect(verifyInclusion(i, N + 3_000, grown[i] as Buffer, path, Buffer.from(grownHead.root_hash, 'hex')), `grown, leaf ${i}`).toBe(true);
    }
  });

  it('refuses to answer from a log that lacks a root it needs', async () => {
    const { fetch } = storedLog(leaves);
    const lacking: FetchHashes = async (reads) => {
      const got = await fetch(reads);
      got.nodes.delete('16/0');
      return got;
    };
    await expect(createPathCache().inclusionPath(head, 69_000, lacking)).rejects.toThrow(/lacks level-16 roots/);
  });
});
