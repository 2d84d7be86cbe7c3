/**
 * A bounded map of keys known to be stored, with their fingerprints. Rows are immutable, so an
 * entry never goes stale; the bound only trades memory for ClickHouse look-ups.
 *
 * Keys that are lowercase UUIDs with hex fingerprints (invocations and outputs: nearly every
 * entry) live in typed arrays — an open-addressing table over a ring of entries — so a million
 * entries cost ~50 MB outside the JavaScript heap and nothing to the garbage collector. Other
 * keys (dependency pairs) use a {@link FifoMap}. Both evict their oldest entries beyond capacity.
 */

import { FifoMap } from './fifo-map.ts';

const KINDS: Record<string, number> = { invocation: 1, output: 2, dependency: 3 };

/** Bounded key → fingerprint cache, per kind of row. */
export class DedupCache {
  private readonly cap: number;
  private readonly mask: number;
  /** Open-addressing table: entry index + 1, 0 = empty. */
  private readonly table: Int32Array;
  private readonly keys: Uint32Array;
  private readonly fps: Uint32Array;
  private readonly kinds: Uint8Array;
  private readonly hashes: Uint32Array;
  private readonly slotOf: Int32Array;
  /** Next ring position to fill; entries [0, used) are live. */
  private head = 0;
  private used = 0;
  private readonly other: FifoMap<string>;

  constructor(capacity: number) {
    this.cap = Math.max(0, Math.floor(capacity));
    let size = 2;
    while (size < this.cap * 2) size *= 2;
    this.mask = size - 1;
    this.table = new Int32Array(this.cap ? size : 0);
    this.keys = new Uint32Array(this.cap * 4);
    this.fps = new Uint32Array(this.cap * 4);
    this.kinds = new Uint8Array(this.cap);
    this.hashes = new Uint32Array(this.cap);
    this.slotOf = new Int32Array(this.cap);
    this.other = new FifoMap(this.cap);
  }

  /** Fingerprint stored under (kind, key), if known. */
  get(kind: string, key: string, fingerprintHint?: string): string | undefined {
    if (this.cap === 0) return undefined;
    const k = KINDS[kind] ?? 0;
    if (!k || !words(key)) return this.other.size ? this.other.get(`${kind}:${key}`) : undefined;
    const slot = this.find(k, scratch, hash(k, scratch));
    if (slot < 0) return undefined;
    const e = (this.table[slot] as number) - 1;
    // The caller usually compares with the fingerprint it has: answer with that string when equal.
    if (fingerprintHint !== undefined && this.fpEquals(e, fingerprintHint)) return fingerprintHint;
    return this.fpText(e);
  }

  /** Remembers a stored key; evicts the oldest entries beyond capacity. */
  add(kind: string, key: string, fingerprint: string): void {
    if (this.cap === 0) return;
    const k = KINDS[kind] ?? 0;
    if (!k || !fpWords(fingerprint) || !words(key)) {
      this.other.set(`${kind}:${key}`, fingerprint);
      return;
    }
    const w = scratch;
    const h = hash(k, w);
    if (this.find(k, w, h) >= 0) return; // rows are immutable: the first fingerprint stays
    const e = this.head;
    if (this.used === this.cap) this.remove(e);
    else this.used++;
    this.head = (this.head + 1) % this.cap;
    this.kinds[e] = k;
    this.hashes[e] = h;
    this.keys.set(w, e * 4);
    this.fps.set(fpScratch, e * 4);
    let slot = h & this.mask;
    while (this.table[slot] !== 0) slot = (slot + 1) & this.mask;
    this.table[slot] = e + 1;
    this.slotOf[e] = slot;
  }

  /** Number of entries held. */
  get size(): number {
    return this.used + this.other.size;
  }

  private find(k: number, w: Uint32Array, h: number): number {
    let slot = h & this.mask;
    for (;;) {
      const v = this.table[slot] as number;
      if (v === 0) return -1;
      const e = v - 1;
      const o = e * 4;
      if (
        this.hashes[e] === h &&
        this.kinds[e] === k &&
        this.keys[o] === w[0] &&
        this.keys[o + 1] === w[1] &&
        this.keys[o + 2] === w[2] &&
        this.keys[o + 3] === w[3]
      ) {
        return slot;
      }
      slot = (slot + 1) & this.mask;
    }
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

  private fpEquals(e: number, fp: string): boolean {
    if (!fpWords(fp)) return false;
    for (let i = 0; i < 4; i++) if (this.fps[e * 4 + i] !== fpScratch[i]) return false;
    return true;
  }

  private fpText(e: number): string {
    let s = '';
    for (let i = 0; i < 4; i++) s += (this.fps[e * 4 + i] as number).toString(16).padStart(8, '0');
    return s;
  }
}

const scratch = new Uint32Array(4);

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

/** The 128 bits of a lowercase UUID into scratch; false when key is not one. */
function words(uuid: string): boolean {
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
  return true;
}

/** The 128 bits of a 32-digit lowercase hex fingerprint into fpScratch; false when it is not one. */
const fpScratch = new Uint32Array(4);
function fpWords(fp: string): boolean {
  if (fp.length !== 32) return false;
  for (let w = 0; w < 4; w++) {
    let v = 0;
    for (let i = w * 8; i < w * 8 + 8; i++) {
      const d = hexDigit(fp.charCodeAt(i));
      if (d < 0) return false;
      v = v * 16 + d;
    }
    fpScratch[w] = v;
  }
  return true;
}

/** Mixes all 128 bits and the kind (UUIDs are not always random: v1, v7 share prefixes). */
function hash(kind: number, w: Uint32Array): number {
  let h = Math.imul(kind, 0x9e3779b1);
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
  private readonly cap: number;
  private readonly mask: number;
  private readonly table: Int32Array;
  private readonly keys: Uint32Array;
  private readonly seen: Float64Array;
  private readonly hashes: Uint32Array;
  private readonly slotOf: Int32Array;
  private head = 0;
  private used = 0;
  private readonly words = new Uint32Array(8);

  constructor(capacity: number) {
    this.cap = Math.max(0, Math.floor(capacity));
    let size = 2;
    while (size < this.cap * 2) size *= 2;
    this.mask = size - 1;
    this.table = new Int32Array(this.cap ? size : 0);
    this.keys = new Uint32Array(this.cap * 8);
    this.seen = new Float64Array(this.cap);
    this.hashes = new Uint32Array(this.cap);
    this.slotOf = new Int32Array(this.cap);
  }

  /** last_seen (epoch ms) written for a content hash, if this process wrote it (and still remembers). */
  get(hash: string): number | undefined {
    if (this.cap === 0 || !this.parse(hash)) return undefined;
    const slot = this.find(mix(this.words));
    return slot < 0 ? undefined : this.seen[(this.table[slot] as number) - 1];
  }

  /** Records that a content hash was written with last_seen `ms`. */
  set(hash: string, ms: number): void {
    if (this.cap === 0 || !this.parse(hash)) return;
    const h = mix(this.words);
    const slot = this.find(h);
    if (slot >= 0) {
      this.seen[(this.table[slot] as number) - 1] = ms;
      return;
    }
    const e = this.head;
    if (this.used === this.cap) this.remove(e);
    else this.used++;
    this.head = (this.head + 1) % this.cap;
    this.keys.set(this.words, e * 8);
    this.seen[e] = ms;
    this.hashes[e] = h;
    let s = h & this.mask;
    while (this.table[s] !== 0) s = (s + 1) & this.mask;
    this.table[s] = e + 1;
    this.slotOf[e] = s;
  }

  private parse(hex: string): boolean {
    if (hex.length !== 64) return false;
    for (let w = 0; w < 8; w++) {
      let v = 0;
      for (let i = w * 8; i < w * 8 + 8; i++) {
        const d = hexDigit(hex.charCodeAt(i));
        if (d < 0) return false;
        v = v * 16 + d;
      }
      this.words[w] = v;
    }
    return true;
  }

  private find(h: number): number {
    let slot = h & this.mask;
    for (;;) {
      const v = this.table[slot] as number;
      if (v === 0) return -1;
      const o = (v - 1) * 8;
      let same = this.hashes[v - 1] === h;
      for (let i = 0; same && i < 8; i++) same = this.keys[o + i] === this.words[i];
      if (same) return slot;
      slot = (slot + 1) & this.mask;
    }
  }

  private remove(e: number): void {
    let i = this.slotOf[e] as number;
    this.table[i] = 0;
    let j = i;
    for (;;) {
      j = (j + 1) & this.mask;
      const v = this.table[j] as number;
      if (v === 0) return;
      const home = (this.hashes[v - 1] as number) & this.mask;
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

/** A content hash's first 32 bits are uniformly random already (SHA-256); fold the rest in anyway. */
function mix(w: Uint32Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < 8; i++) h = Math.imul(h ^ (w[i] as number), 0x01000193);
  return (h ^ (h >>> 15)) >>> 0;
}
