/**
 * A Bloom filter of stored keys (pure: no I/O). It answers "certainly not stored" for almost
 * every new key, so a write round asks ClickHouse only about the keys it cannot rule out
 * (ingest/key-index.ts). A key's two hashes (key-hash.ts) probe K positions of one cache line.
 */

const K = 8;
/** Bits per key at the filter's capacity; at half capacity the false-positive rate is ~2e-5, at capacity ~9e-4 (blocked: {@link KeyFilter}). */
export const BITS_PER_KEY = 16;

/** Bits of a block: one 64-byte cache line, where all K bits of a key lie. */
const BLOCK_BITS = 512;
const BLOCK_WORDS = BLOCK_BITS / 32;
/** Blocks of a region {@link GrowingKeyFilter.addPairs} fills at a time: 256 KB, within the caches. */
const REGION_BLOCKS = 4096;

/** Odd multipliers, one per probe (MurmurHash3's and xxHash's constants). */
const PROBE_MULTIPLIERS = new Uint32Array([0x9e3779b1, 0x85ebca6b, 0xc2b2ae35, 0x27d4eb2f, 0x165667b1, 0xd3a2646d, 0xfd7046c5, 0xb55a4f09]);

/**
 * The i-th bit of a key inside its block: the top 9 bits of h2 times the i-th odd multiplier
 * (multiply-shift hashing, one multiplication a probe). Double hashing (h2 + i·step mod 512) was
 * tried first and answered "maybe" 5× as often as the model (9e-4 against 1.9e-4 at 100,000 keys
 * in 2^21 bits: a progression in 512 bits is too regular); MurmurHash3's finalizer per probe met
 * the model too, with four multiplications a probe.
 */
function probe(h2: number, i: number): number {
  return Math.imul(h2, PROBE_MULTIPLIERS[i] as number) >>> 23;
}

/**
 * A blocked Bloom filter over 2^n bits, fed with hash pairs: h1 picks a block of one cache line,
 * h2 the K bits inside it ({@link probe}). A key costs one cache miss
 * to add or ask about where K bits spread over hundreds of MB cost K: a cold start adds tens of
 * millions of keys on the thread that ingests (2 M keys took 0.6–0.9 s with spread bits). The
 * price is a slightly higher false-positive rate for the same bits (blocks fill unevenly).
 */
export class KeyFilter {
  private readonly blockMask: number;
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
    this.blockMask = n / BLOCK_BITS - 1;
    this.added = added;
  }

  /** Size of the bit array in bytes. */
  get bytes(): number {
    return this.bits.byteLength;
  }

  /** Blocks of one cache line each. */
  get blocks(): number {
    return this.blockMask + 1;
  }

  /** Keys it takes at {@link BITS_PER_KEY} bits each; past that it is full. */
  get capacity(): number {
    return (this.bytes * 8) / BITS_PER_KEY;
  }

  /**
   * Expected false-positive rate at the current fill: the keys per block are Poisson-distributed
   * (mean λ), and a block holding j keys answers "maybe" with the textbook rate of 512 bits, j keys.
   */
  falsePositiveRate(): number {
    const lambda = this.added / (this.blockMask + 1);
    const top = Math.ceil(lambda + 12 * Math.sqrt(lambda) + 20);
    let p = Math.exp(-lambda);
    let rate = 0;
    for (let j = 0; j <= top; j++) {
      if (j > 0) p *= lambda / j;
      rate += p * (1 - (1 - 1 / BLOCK_BITS) ** (K * j)) ** K;
    }
    return rate;
  }

  add(h1: number, h2: number): void {
    this.added++;
    const base = (h1 & this.blockMask) * BLOCK_WORDS;
    for (let i = 0; i < K; i++) {
      const p = probe(h2, i);
      this.bits[base + (p >>> 5)] = (this.bits[base + (p >>> 5)] as number) | (1 << (p & 31));
    }
  }

  /**
   * Adds a key unless all its bits are set already (the filter answered "maybe" for it): one pass
   * over its block, counted in {@link added} only when a bit turned on. True when it did.
   */
  addIfAbsent(h1: number, h2: number): boolean {
    const base = (h1 & this.blockMask) * BLOCK_WORDS;
    let turnedOn = 0;
    for (let i = 0; i < K; i++) {
      const p = probe(h2, i);
      const w = base + (p >>> 5);
      const before = this.bits[w] as number;
      turnedOn |= ~before & (1 << (p & 31));
      this.bits[w] = before | (1 << (p & 31));
    }
    if (turnedOn === 0) return false;
    this.added++;
    return true;
  }

  /** False when the key is certainly not in the filter. */
  mayHave(h1: number, h2: number): boolean {
    const base = (h1 & this.blockMask) * BLOCK_WORDS;
    for (let i = 0; i < K; i++) {
      const p = probe(h2, i);
      if (((this.bits[base + (p >>> 5)] as number) & (1 << (p & 31))) === 0) return false;
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
    const n = this.slices.length;
    for (let i = 0; i < n - 1; i++) if ((this.slices[i] as KeyFilter).mayHave(h1, h2)) return;
    let last = this.slices[n - 1] as KeyFilter;
    if (last.added >= last.capacity) {
      if (last.mayHave(h1, h2)) return;
      last = KeyFilter.sized(Math.max(this.added, last.capacity), this.sliceMaxBytes);
      this.slices.push(last);
    }
    // The newest slice is asked and filled in one pass over the key's block.
    last.addIfAbsent(h1, h2);
  }

  /** False when the key is certainly not in any slice. */
  mayHave(h1: number, h2: number): boolean {
    for (const s of this.slices) if (s.mayHave(h1, h2)) return true;
    return false;
  }

  /**
   * Adds the pairs of a buffer of little-endian (h1, h2) UInt32 pairs, as ClickHouse sends them,
   * in the order of the newest slice's blocks, a region of {@link REGION_BLOCKS} blocks at a time
   * (a counting sort): a slice of 128 MB asked at random misses the cache and the TLB on every key;
   * a region of 256 KB at a time stays in the TLB (2 M keys into 128 MB: 0.86 s before blocks and
   * regions, 0.20 s with them, the sort included). Which keys go into which slice
   * may differ from adding them in order; that every key is added does not.
   */
  addPairs(buf: Buffer): number {
    const n = Math.floor(buf.length / 8);
    const last = this.slices[this.slices.length - 1] as KeyFilter;
    const regions = Math.max(1, last.blocks / REGION_BLOCKS);
    if (regions === 1 || n < 4 * regions) {
      for (let j = 0; j < n; j++) this.add(buf.readUInt32LE(j * 8), buf.readUInt32LE(j * 8 + 4));
      return n;
    }
    const shift = Math.log2(REGION_BLOCKS);
    const mask = last.blocks - 1;
    const starts = new Uint32Array(regions + 1);
    for (let j = 0; j < n; j++) {
      const r = ((buf.readUInt32LE(j * 8) & mask) >>> shift) + 1;
      starts[r] = (starts[r] as number) + 1;
    }
    for (let r = 0; r < regions; r++) starts[r + 1] = (starts[r + 1] as number) + (starts[r] as number);
    // The pairs themselves are moved into region order (not indices to them: reading a 16 MB
    // buffer in region order would miss as often as the filter did).
    const h1s = new Uint32Array(n);
    const h2s = new Uint32Array(n);
    for (let j = 0; j < n; j++) {
      const h1 = buf.readUInt32LE(j * 8);
      const r = (h1 & mask) >>> shift;
      const at = starts[r] as number;
      h1s[at] = h1;
      h2s[at] = buf.readUInt32LE(j * 8 + 4);
      starts[r] = at + 1;
    }
    for (let i = 0; i < n; i++) this.add(h1s[i] as number, h2s[i] as number);
    return n;
  }
}
