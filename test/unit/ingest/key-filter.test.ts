/**
 * The Bloom filter of stored keys: never a false "not stored", a false-positive rate near the
 * one it reports, hash pairs read as ClickHouse sends them, and its memory bound kept.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyFilter, keyHashes } from '../../../ingest/key-filter.ts';

describe('KeyFilter', () => {
  it('never rules out an added key, and rules out nearly every other one', () => {
    const f = KeyFilter.sized(100_000, 1 << 20);
    const added = Array.from({ length: 100_000 }, () => randomUUID());
    for (const k of added) f.add(...keyHashes('invocation', k));
    expect(added.every((k) => f.mayHave(...keyHashes('invocation', k)))).toBe(true);
    // The same key of another kind is another key.
    const otherKind = added.slice(0, 20_000).filter((k) => f.mayHave(...keyHashes('output', k))).length;
    const absent = Array.from({ length: 100_000 }, () => randomUUID()).filter((k) => f.mayHave(...keyHashes('invocation', k))).length;
    // The textbook rate of m bits, n keys, k = 8 probes: (1 - e^(-kn/m))^k. The filter rounds
    // 16 bits per key up to a power of two: 2^21 bits here, ~1e-4, ~10 of 100,000.
    expect(f.bytes * 8).toBe(2 ** 21);
    const expected = (1 - Math.exp((-8 * 100_000) / 2 ** 21)) ** 8;
    expect(f.falsePositiveRate()).toBeCloseTo(expected, 8);
    expect(absent).toBeLessThan(Math.max(30, 3 * expected * 100_000));
    expect(otherKind).toBeLessThan(Math.max(30, 3 * expected * 20_000));
  });

  it('reads little-endian hash pairs and keeps its memory bound', () => {
    const f = KeyFilter.sized(1e9, 1 << 16);
    expect(f.bytes).toBe(1 << 16);
    const [h1, h2] = keyHashes('dependency', 'a>b');
    const buf = Buffer.alloc(8);
    buf.writeUInt32LE(h1, 0);
    buf.writeUInt32LE(h2, 4);
    expect(f.mayHave(h1, h2)).toBe(false);
    expect(f.addPairs(buf)).toBe(1);
    expect(f.mayHave(h1, h2)).toBe(true);
    expect(KeyFilter.sized(10, 1 << 30).bytes).toBe(1024);
  });
});
