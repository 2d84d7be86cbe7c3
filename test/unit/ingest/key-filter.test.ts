/**
 * The Bloom filter of stored keys: never a false "not stored", a false-positive rate near the
 * one it reports, hash pairs read as ClickHouse sends them, and its memory bound kept.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GrowingKeyFilter, KeyFilter } from '../../../ingest/key-filter.ts';
import { keyHashes } from '../../../ingest/key-hash.ts';

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
    // 16 bits per key up to a power of two: 2^21 bits here, ~1e-4, ~10 of 100,000. A blocked
    // filter (a key's bits in one 512-bit block) does a little worse, as blocks fill unevenly:
    // between the textbook rate and twice it at this fill.
    expect(f.bytes * 8).toBe(2 ** 21);
    const textbook = (1 - Math.exp((-8 * 100_000) / 2 ** 21)) ** 8;
    expect(f.falsePositiveRate()).toBeGreaterThan(textbook);
    expect(f.falsePositiveRate()).toBeLessThan(2 * textbook);
    expect(absent).toBeLessThan(Math.max(30, 3 * f.falsePositiveRate() * 100_000));
    expect(otherKind).toBeLessThan(Math.max(30, 3 * f.falsePositiveRate() * 20_000));
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

  it('adds pairs in block order with the same answers as one by one: every pair kept, nothing else gained', () => {
    // 2^23 bits: 16,384 blocks in 4 regions, so 100,000 pairs take the sorted path.
    const pairs = Buffer.alloc(100_000 * 8);
    const keys = Array.from({ length: 100_000 }, () => randomUUID());
    keys.forEach((k, j) => {
      const [h1, h2] = keyHashes('invocation', k);
      pairs.writeUInt32LE(h1, j * 8);
      pairs.writeUInt32LE(h2, j * 8 + 4);
    });
    const sorted = new GrowingKeyFilter(500_000, 1 << 20);
    const oneByOne = new GrowingKeyFilter(500_000, 1 << 20);
    expect(sorted.parts[0]?.bytes).toBe(1 << 20);
    expect(sorted.addPairs(pairs)).toBe(100_000);
    for (const k of keys) oneByOne.add(...keyHashes('invocation', k));
    expect(keys.every((k) => sorted.mayHave(...keyHashes('invocation', k)))).toBe(true);
    // A single slice holds the same bits whatever the order.
    expect(Buffer.from(sorted.parts[0]!.bits.buffer).equals(Buffer.from(oneByOne.parts[0]!.bits.buffer))).toBe(true);
  });

  it('grows by a slice when full instead of saturating: every key kept, the rate stays that of a filter within capacity', () => {
    // A first slice of 1 KiB takes 512 keys; each new one is sized for the keys so far: 512, 512, 1024, 2048, 4096, 8192.
    const f = new GrowingKeyFilter(512, 1 << 16);
    const added = Array.from({ length: 10_000 }, () => randomUUID());
    for (const k of added) f.add(...keyHashes('invocation', k));
    expect(added.every((k) => f.mayHave(...keyHashes('invocation', k)))).toBe(true);
    // Every key counted once (a key the filter already answered "maybe" for is not added again:
    // the false positives met while it filled, ~0.25 % here with six slices, far below 1 %).
    expect(f.added).toBeGreaterThan(9_900);
    expect(f.added).toBeLessThanOrEqual(10_000);
    // Read again (a catch-up rereading rows it already holds): no key counted twice, no slice added.
    const before = { added: f.added, slices: f.parts.length };
    for (const k of added) f.add(...keyHashes('invocation', k));
    expect({ added: f.added, slices: f.parts.length }).toEqual(before);
    expect(f.parts.map((s) => s.capacity)).toEqual([512, 512, 1024, 2048, 4096, 8192]);
    // Memory: 16 bits per key when the slices are full, at most twice that just after one is added.
    expect(f.bytes * 8).toBeGreaterThanOrEqual(10_000 * 16);
    expect(f.bytes * 8).toBeLessThanOrEqual(2 * 10_000 * 16 * 2);
    const absent = Array.from({ length: 50_000 }, () => randomUUID()).filter((k) => f.mayHave(...keyHashes('invocation', k))).length;
    // A saturated filter of the first slice's size would answer "maybe" for nearly all of them.
    const saturated = KeyFilter.sized(512, 1 << 10);
    for (const k of added) saturated.add(...keyHashes('invocation', k));
    expect(saturated.falsePositiveRate()).toBeGreaterThan(0.9);
    expect(f.falsePositiveRate()).toBeLessThan(0.005);
    // No slice grows past its bound: past it, slices of that size are added.
    const capped = new GrowingKeyFilter(512, 1 << 11);
    for (const k of added) capped.add(...keyHashes('invocation', k));
    expect(capped.parts.every((s) => s.bytes <= 1 << 11)).toBe(true);
    expect(added.every((k) => capped.mayHave(...keyHashes('invocation', k)))).toBe(true);
    expect(absent).toBeLessThan(Math.max(50, 3 * f.falsePositiveRate() * 50_000));
  });
});

