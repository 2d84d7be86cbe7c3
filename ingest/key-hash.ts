/**
 * How a stored key is hashed for the key filter (key-filter.ts): MurmurHash3 (x86, 32-bit, seed
 * 0) — the same function as ClickHouse's murmurHash3_32, so ClickHouse can hash stored keys when
 * the filter is rebuilt and no key text has to travel — twice per key, apart by the key's kind.
 * Pure: no I/O.
 */

/** Letters that keep the keys of the kinds apart in one filter. */
export const KEY_KIND_LETTER = { invocation: 'i', output: 'o', dependency: 'd', quarantine: 'q', turn: 't', run: 'r' } as const;
/** The kinds of keys in the filter. */
export type KeyKind = keyof typeof KEY_KIND_LETTER;

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
