/**
 * Turns a POST /v1/packets body into raw packets, keeping each packet's exact text: a JSON
 * array is split into its elements, NDJSON into its lines. Pure.
 */
import { splitJsonArray } from '../schemas/lossless-json.ts';

/** The packets of a body, or why the body as a whole is unusable (→ 400). */
export type BodyResult = { ok: true; packets: string[] } | { ok: false; error: string };

/**
 * Splits a request body. An array that does not parse is malformed; a body that is one JSON
 * object (pretty-printed or not) is one packet; otherwise NDJSON, whose lines are judged one by
 * one. A body opening with a lone `{` line is a pretty-printed object, never NDJSON: when it does
 * not parse it is refused whole rather than quarantined line by line.
 */
export function splitPacketBody(body: string): BodyResult {
  const text = body.trim();
  if (text === '') return { ok: false, error: 'empty body: send a JSON array of packets or NDJSON' };
  if (text.startsWith('[')) {
    const packets = splitJsonArray(text);
    return packets ? { ok: true, packets } : { ok: false, error: 'malformed JSON: the body is not a well-formed JSON array' };
  }
  if (text.startsWith('{')) {
    if (isJson(text)) return { ok: true, packets: [text] };
    const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
    if (lines[0] === '{') return { ok: false, error: 'malformed JSON: a pretty-printed packet object that does not parse; send one packet, a JSON array, or NDJSON (one packet per line)' };
    return { ok: true, packets: lines };
  }
  return { ok: false, error: 'malformed JSON: expected a JSON array of packets or NDJSON (one packet object per line)' };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Offset of the first byte where `bytes` stop being valid UTF-8 (their length when they are valid). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const n = utf8SequenceLength(bytes, i);
    if (n === 0) return i;
    i += n;
  }
  return i;
}

/** Length of the well-formed UTF-8 sequence at i (RFC 3629 table 3-7), 0 when there is none. */
function utf8SequenceLength(b: Uint8Array, i: number): number {
  const c = b[i] as number;
  if (c < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < b.length && (b[i + k] as number) >= lo && (b[i + k] as number) <= hi;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const [lo, hi] = c === 0xe0 ? [0xa0, 0xbf] : c === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const [lo, hi] = c === 0xf0 ? [0x90, 0xbf] : c === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}
