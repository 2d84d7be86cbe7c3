/**
 * A Bloom filter of stored keys (pure: no I/O). It answers "certainly not stored" for almost
 * every new key, so a write round asks ClickHouse only about the keys it cannot rule out
 * (ingest/key-index.ts). A key is hashed twice with MurmurHash3 (x86, 32-bit, seed 0) — the same
 * function as ClickHouse's murmurHash3_32, so ClickHouse can hash stored keys when the filter is
 * rebuilt and no key text has to travel — and probed at K positions by double hashing.
 */

/** Letters that keep the keys of the kinds apart in one filter. */
export const KEY_KIND_LETTER = { invocation: 'i', output: 'o', dependency: 'd', quarantine: 'q' } as const;
/** The kinds of keys in the filter. */
export type KeyKind = keyof typeof KEY_KIND_LETTER;

const K = 8;
/** Bits per key at the filter's capacity; at half capacity the false-positive rate is ~1e-6, at capacity ~6e-4. */
export const BITS_PER_KEY = 16;

/** MurmurHash3_x86_32 with seed 0 of a string's UTF-8 bytes (equals ClickHouse's murmurHash3_32). */
export function murmur3(s: string): number {
  // Keys are ASCII nearly always; anything else goes through its UTF-8 bytes.
  // eslint-disable-next-line no-control-regex
  const b: { length: number; at(i: number): number } = /^[\x00-\x7f]*$/.test(s) ? { length: s.length, at: (i) => s.charCodeAt(i) } : bytesOf(s);
  const n = b.length;
  let h = 0;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    h ^= mixK(b.at(i) | (b.at(i + 1) << 8) | (b.at(i + 2) << 16) | (b.at(i + 3) << 24));
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const r = n & 3;
  if (r) {
    let k = 0;
    if (r === 3) k ^= b.at(i + 2) << 16;
    if (r >= 2) k ^= b.at(i + 1) << 8;
    h ^= mixK(k ^ b.at(i));
  }
  h ^= n;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function mixK(k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, 0x1b873593);
}

function bytesOf(s: string): { length: number; at(i: number): number } {
  const buf = Buffer.from(s, 'utf8');
  return { length: buf.length, at: (i) => buf[i] as number };
}

/** The two hashes of a key of a kind: murmur3(letter + key) and murmur3(key + letter). */
export function keyHashes(kind: KeyKind, key: string): [number, number] {
  const l = KEY_KIND_LETTER[kind];
  return [murmur3(l + key), murmur3(key + l)];
}

/** A Bloom filter over 2^n bits, fed with hash pairs. */
export class KeyFilter {
  private readonly bits: Uint32Array;
  private readonly mask: number;
  /** Hash pairs added (repeats included): how full the filter is. */
  added = 0;

  /** A filter for about `capacity` keys, of at most `maxBytes` bytes (a power of two ≥ 1 KiB). */
  constructor(capacity: number, maxBytes: number) {
    let bytes = 1024;
    while (bytes * 8 < capacity * BITS_PER_KEY && bytes * 2 <= maxBytes) bytes *= 2;
    this.bits = new Uint32Array(bytes / 4);
    this.mask = bytes * 8 - 1;
  }

  /** Size of the bit array in bytes. */
  get bytes(): number {
    return this.bits.byteLength;
  }

  /** Expected false-positive rate at the current fill. */
  falsePositiveRate(): number {
    return (1 - Math.exp((-K * this.added) / (this.mask + 1))) ** K;
  }

  add(h1: number, h2: number): void {
    this.added++;
    const step = (h2 | 1) >>> 0;
    for (let i = 0, p = h1 >>> 0; i < K; i++, p = (p + step) >>> 0) {
      const bit = p & this.mask;
      this.bits[bit >>> 5] = (this.bits[bit >>> 5] as number) | (1 << (bit & 31));
    }
  }

  /** False when the key is certainly not in the filter. */
  mayHave(h1: number, h2: number): boolean {
    const step = (h2 | 1) >>> 0;
    for (let i = 0, p = h1 >>> 0; i < K; i++, p = (p + step) >>> 0) {
      const bit = p & this.mask;
      if (((this.bits[bit >>> 5] as number) & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }

  /** Adds the pairs of a buffer of little-endian (h1, h2) UInt32 pairs, as ClickHouse sends them. */
  addPairs(buf: Buffer): number {
    const n = Math.floor(buf.length / 8);
    for (let j = 0; j < n; j++) this.add(buf.readUInt32LE(j * 8), buf.readUInt32LE(j * 8 + 4));
    return n;
  }
}
