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
  const [b, n] = framed(-1, s, -1);
  return murmurBytes(b, n);
}

/** Bytes of the key being hashed: reused, so hashing allocates nothing for ASCII keys. */
let scratch = new Uint8Array(256);

/**
 * The bytes of `pre` (a byte, or -1 for none), `s` and `post` (likewise), and their count: in a
 * reused scratch buffer when `s` is ASCII (keys are hashed ~10^5 times a second: no string is
 * built), else a UTF-8 Buffer of their own.
 */
function framed(pre: number, s: string, post: number): [Uint8Array, number] {
  let n = 0;
  if (scratch.length < s.length + 2) scratch = new Uint8Array(2 * s.length + 2);
  if (pre >= 0) scratch[n++] = pre;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) {
      const b = Buffer.from(`${pre < 0 ? '' : String.fromCharCode(pre)}${s}${post < 0 ? '' : String.fromCharCode(post)}`, 'utf8');
      return [b, b.length];
    }
    scratch[n++] = c;
  }
  if (post >= 0) scratch[n++] = post;
  return [scratch, n];
}

/** MurmurHash3_x86_32 (seed 0) of the n bytes of b from off. */
function murmurBytes(b: Uint8Array, n = b.length, off = 0): number {
  let h = 0;
  let i = off;
  const end = off + n;
  for (; i + 4 <= end; i += 4) {
    h ^= mixK((b[i] as number) | ((b[i + 1] as number) << 8) | ((b[i + 2] as number) << 16) | ((b[i + 3] as number) << 24));
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const r = n & 3;
  if (r) {
    let k = 0;
    if (r === 3) k ^= (b[i + 2] as number) << 16;
    if (r >= 2) k ^= (b[i + 1] as number) << 8;
    h ^= mixK(k ^ (b[i] as number));
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

const LETTER_CODE = Object.fromEntries(Object.entries(KEY_KIND_LETTER).map(([k, l]) => [k, l.charCodeAt(0)])) as Record<KeyKind, number>;

/** The two hashes of a key of a kind: murmur3(letter + key) and murmur3(key + letter). */
export function keyHashes(kind: KeyKind, key: string): [number, number] {
  const l = LETTER_CODE[kind];
  // Both hashes from one copy of the key: letter + key + letter, without its last and first byte.
  const [b, n] = framed(l, key, l);
  return [murmurBytes(b, n - 1), murmurBytes(b, n - 1, 1)];
}

/** A Bloom filter over 2^n bits, fed with hash pairs. */
export class KeyFilter {
  private readonly mask: number;
  /** Hash pairs added (repeats included): how full the filter is. */
  added = 0;

  /** A filter for about `capacity` keys, of at most `maxBytes` bytes (a power of two ≥ 1 KiB). */
  static sized(capacity: number, maxBytes: number): KeyFilter {
    let bytes = 1024;
    while (bytes * 8 < capacity * BITS_PER_KEY && bytes * 2 <= maxBytes) bytes *= 2;
    return new KeyFilter(new Uint32Array(bytes / 4));
  }

  /** A filter over these bits (a power of two of them, ≥ 1 KiB: {@link sized}, or a snapshot's). */
  constructor(readonly bits: Uint32Array, added = 0) {
    const n = bits.byteLength * 8;
    if (n < 8192 || (n & (n - 1)) !== 0) throw new Error(`a key filter has a power of two of bits, at least 8192 (got ${n})`);
    this.mask = n - 1;
    this.added = added;
  }

  /** Size of the bit array in bytes. */
  get bytes(): number {
    return this.bits.byteLength;
  }

  /** Keys it takes at {@link BITS_PER_KEY} bits each; past that it is full. */
  get capacity(): number {
    return (this.bytes * 8) / BITS_PER_KEY;
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

/**
 * A Bloom filter that grows instead of filling up: slices of {@link KeyFilter}, each of at most
 * `sliceMaxBytes`. Keys go into the newest slice; when it holds its capacity, a new slice sized
 * for as many keys as all slices hold so far is added (the memory doubles, the false-positive
 * rate of every slice stays at most ~6e-4), and a key may be in any slice. Memory is therefore
 * 2 bytes per key when slices are full, at most ~4 bytes per key just after one is added.
 */
export class GrowingKeyFilter {
  private readonly slices: KeyFilter[];

  constructor(
    capacity: number,
    private readonly sliceMaxBytes: number,
    slices?: KeyFilter[],
  ) {
    this.slices = slices?.length ? slices : [KeyFilter.sized(capacity, sliceMaxBytes)];
  }

  /** The slices, oldest first (what a snapshot writes). */
  get parts(): readonly KeyFilter[] {
    return this.slices;
  }

  /** Hash pairs added to every slice. */
  get added(): number {
    return this.slices.reduce((n, s) => n + s.added, 0);
  }

  /** Memory of every slice, bytes. */
  get bytes(): number {
    return this.slices.reduce((n, s) => n + s.bytes, 0);
  }

  /** Chance that an absent key is reported as maybe stored: one of the slices says so. */
  falsePositiveRate(): number {
    return 1 - this.slices.reduce((p, s) => p * (1 - s.falsePositiveRate()), 1);
  }

  /**
   * Adds a key unless the filter already answers "maybe" for it: a key read again (a start's
   * catch-up rereads 10 minutes before its snapshot; a writer logs what the load also read) then
   * neither counts twice nor grows the filter by a slice. A false positive skipped is harmless:
   * the filter already answers "maybe" for that key, and bits only ever turn on.
   */
  add(h1: number, h2: number): void {
    if (this.mayHave(h1, h2)) return;
    let last = this.slices[this.slices.length - 1] as KeyFilter;
    if (last.added >= last.capacity) {
      last = KeyFilter.sized(Math.max(this.added, last.capacity), this.sliceMaxBytes);
      this.slices.push(last);
    }
    last.add(h1, h2);
  }

  /** False when the key is certainly not in any slice. */
  mayHave(h1: number, h2: number): boolean {
    for (const s of this.slices) if (s.mayHave(h1, h2)) return true;
    return false;
  }

  /** Adds the pairs of a buffer of little-endian (h1, h2) UInt32 pairs, as ClickHouse sends them. */
  addPairs(buf: Buffer): number {
    const n = Math.floor(buf.length / 8);
    for (let j = 0; j < n; j++) this.add(buf.readUInt32LE(j * 8), buf.readUInt32LE(j * 8 + 4));
    return n;
  }
}
