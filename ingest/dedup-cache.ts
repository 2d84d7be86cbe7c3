/**
 * A bounded map of keys known to be stored, with their fingerprints. Rows are immutable, so an
 * entry never goes stale; the bound only trades memory for ClickHouse look-ups.
 *
 * Keys that are lowercase UUIDs with hex fingerprints (invocations and outputs: nearly every
 * entry) live in typed arrays — an open-addressing table over a ring of entries ({@link RingIndex})
 * — so a million entries cost ~50 MB outside the JavaScript heap and nothing to the garbage
 * collector. Other keys (dependency pairs) use a {@link FifoMap}. Both evict their oldest
 * entries beyond capacity.
 */

import { FifoMap } from './fifo-map.ts';

const KINDS: Record<string, number> = { invocation: 1, output: 2, dependency: 3 };

/**
 * An open-addressing hash table over a FIFO ring of `capacity` entries whose keys are `width`
 * 32-bit words, in typed arrays. Its owner keeps values in its own arrays, indexed by entry.
 */
class RingIndex {
  private readonly mask: number;
  /** Slot → entry index + 1, 0 = empty. */
  private readonly table: Int32Array;
  private readonly keys: Uint32Array;
  private readonly hashes: Uint32Array;
  private readonly slotOf: Int32Array;
  /** Next ring position to fill; entries [0, used) are live. */
  private head = 0;
  private used = 0;

  constructor(
    readonly capacity: number,
    private readonly width: number,
  ) {
    let size = 2;
    while (size < capacity * 2) size *= 2;
    this.mask = size - 1;
    this.table = new Int32Array(capacity ? size : 0);
    this.keys = new Uint32Array(capacity * width);
    this.hashes = new Uint32Array(capacity);
    this.slotOf = new Int32Array(capacity);
  }

  get size(): number {
    return this.used;
  }

  /** The entry holding key `w` (whose hash is `h`), or -1. */
  find(w: Uint32Array, h: number): number {
    let slot = h & this.mask;
    for (;;) {
      const v = this.table[slot] as number;
      if (v === 0) return -1;
      const e = v - 1;
      if (this.hashes[e] === h && this.sameKey(e, w)) return e;
      slot = (slot + 1) & this.mask;
    }
  }

  /** Adds a key not held yet, in place of the oldest entry when full; returns its entry. */
  insert(w: Uint32Array, h: number): number {
    const e = this.head;
    if (this.used === this.capacity) this.remove(e);
    else this.used++;
    this.head = (this.head + 1) % this.capacity;
    this.hashes[e] = h;
    this.keys.set(w, e * this.width);
    let slot = h & this.mask;
    while (this.table[slot] !== 0) slot = (slot + 1) & this.mask;
    this.table[slot] = e + 1;
    this.slotOf[e] = slot;
    return e;
  }

  private sameKey(e: number, w: Uint32Array): boolean {
    const o = e * this.width;
    for (let i = 0; i < this.width; i++) if (this.keys[o + i] !== w[i]) return false;
    return true;
  }

  /** Deletes entry e from the table (backward-shift deletion keeps probe chains intact). */
  private remove(e: number): void {
    let i = this.slotOf[e] as number;
    this.table[i] = 0;
    let j = i;
    for (;;) {
      j = (j + 1) & this.mask;
      const v = this.table[j] as number;
      if (v === 0) return;
      const home = (this.hashes[v - 1] as number) & this.mask;
      // Move the entry at j into the hole at i unless its home lies cyclically in (i, j].
      const stays = i <= j ? home > i && home <= j : home > i || home <= j;
      if (!stays) {
        this.table[i] = v;
        this.slotOf[v - 1] = i;
        this.table[j] = 0;
        i = j;
      }
    }
  }
}

/** Bounded key → fingerprint cache, per kind of row. */
export class DedupCache {
  private readonly index: RingIndex;
  /** Fingerprint of each entry, 4 words. */
  private readonly fps: Uint32Array;
  private readonly other: FifoMap<string>;

  constructor(capacity: number) {
    const cap = Math.max(0, Math.floor(capacity));
    this.index = new RingIndex(cap, 5);
    this.fps = new Uint32Array(cap * 4);
    this.other = new FifoMap(cap);
  }

  /** Fingerprint stored under (kind, key), if known. */
  get(kind: string, key: string, fingerprintHint?: string): string | undefined {
    if (this.index.capacity === 0) return undefined;
    const k = KINDS[kind] ?? 0;
    if (!k || !uuidKey(k, key)) return this.other.size ? this.other.get(`${kind}:${key}`) : undefined;
    const e = this.index.find(scratch, hash(scratch));
    if (e < 0) return undefined;
    // The caller usually compares with the fingerprint it has: answer with that string when equal.
    if (fingerprintHint !== undefined && this.fpEquals(e, fingerprintHint)) return fingerprintHint;
    return this.fpText(e);
  }

  /** Remembers a stored key; evicts the oldest entries beyond capacity. */
  add(kind: string, key: string, fingerprint: string): void {
    if (this.index.capacity === 0) return;
    const k = KINDS[kind] ?? 0;
    if (!k || !hexWords(fingerprint, 4, fpScratch) || !uuidKey(k, key)) {
      this.other.set(`${kind}:${key}`, fingerprint);
      return;
    }
    const h = hash(scratch);
    if (this.index.find(scratch, h) >= 0) return; // rows are immutable: the first fingerprint stays
    this.fps.set(fpScratch, this.index.insert(scratch, h) * 4);
  }

  /** Number of entries held. */
  get size(): number {
    return this.index.size + this.other.size;
  }

  private fpEquals(e: number, fp: string): boolean {
    if (!hexWords(fp, 4, fpScratch)) return false;
    for (let i = 0; i < 4; i++) if (this.fps[e * 4 + i] !== fpScratch[i]) return false;
    return true;
  }

  private fpText(e: number): string {
    let s = '';
    for (let i = 0; i < 4; i++) s += (this.fps[e * 4 + i] as number).toString(16).padStart(8, '0');
    return s;
  }
}

/** Key of the last {@link uuidKey}: the UUID's 4 words, then the kind. */
const scratch = new Uint32Array(5);
/** Fingerprint words of the last {@link hexWords} into it. */
const fpScratch = new Uint32Array(4);

/** Value of the hex digit c (lowercase only), or -1. */
const hexDigit = (c: number): number => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1);

/** Reads 8 hex digits of s from i, skipping one '-' where UUIDs have them; -1 when not hex. */
function hexWord(s: string, i: number): number {
  let v = 0;
  for (let n = 0; n < 8; i++) {
    if (i === 8 || i === 13 || i === 18 || i === 23) continue;
    const d = hexDigit(s.charCodeAt(i));
    if (d < 0) return -1;
    v = v * 16 + d;
    n++;
  }
  return v;
}

/** The 128 bits of a lowercase UUID and the kind into scratch; false when key is not a UUID. */
function uuidKey(kind: number, uuid: string): boolean {
  if (uuid.length !== 36 || uuid.charCodeAt(8) !== 45 || uuid.charCodeAt(13) !== 45 || uuid.charCodeAt(18) !== 45 || uuid.charCodeAt(23) !== 45) return false;
  const a = hexWord(uuid, 0);
  const b = hexWord(uuid, 9);
  const c = hexWord(uuid, 19);
  const d = hexWord(uuid, 28);
  if (a < 0 || b < 0 || c < 0 || d < 0) return false;
  scratch[0] = a;
  scratch[1] = b;
  scratch[2] = c;
  scratch[3] = d;
  scratch[4] = kind;
  return true;
}

/** The bits of a string of exactly 8·n lowercase hex digits into out; false when it is not one. */
function hexWords(hex: string, n: number, out: Uint32Array): boolean {
  if (hex.length !== n * 8) return false;
  for (let w = 0; w < n; w++) {
    let v = 0;
    for (let i = w * 8; i < w * 8 + 8; i++) {
      const d = hexDigit(hex.charCodeAt(i));
      if (d < 0) return false;
      v = v * 16 + d;
    }
    out[w] = v;
  }
  return true;
}

/** Mixes all 128 bits and the kind (UUIDs are not always random: v1, v7 share prefixes). */
function hash(w: Uint32Array): number {
  let h = Math.imul(w[4] as number, 0x9e3779b1);
  for (let i = 0; i < 4; i++) {
    h ^= w[i] as number;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/**
 * Content hashes (64 lowercase hex digits) this process wrote to output_contents, with the
 * last_seen written (epoch ms). Typed arrays, FIFO-bounded, like {@link DedupCache}.
 */
export class ContentSeen {
  private readonly index: RingIndex;
  private readonly seen: Float64Array;
  private readonly words = new Uint32Array(8);

  constructor(capacity: number) {
    const cap = Math.max(0, Math.floor(capacity));
    this.index = new RingIndex(cap, 8);
    this.seen = new Float64Array(cap);
  }

  /** last_seen (epoch ms) written for a content hash, if this process wrote it (and still remembers). */
  get(hash: string): number | undefined {
    if (this.index.capacity === 0 || !hexWords(hash, 8, this.words)) return undefined;
    const e = this.index.find(this.words, mix(this.words));
    return e < 0 ? undefined : this.seen[e];
  }

  /** Records that a content hash was written with last_seen `ms`. */
  set(hash: string, ms: number): void {
    if (this.index.capacity === 0 || !hexWords(hash, 8, this.words)) return;
    const h = mix(this.words);
    const e = this.index.find(this.words, h);
    this.seen[e >= 0 ? e : this.index.insert(this.words, h)] = ms;
  }
}

/** A content hash's first 32 bits are uniformly random already (SHA-256); fold the rest in anyway. */
function mix(w: Uint32Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < 8; i++) h = Math.imul(h ^ (w[i] as number), 0x01000193);
  return (h ^ (h >>> 15)) >>> 0;
}
