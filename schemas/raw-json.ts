/**
 * JSON text served as it is stored. The canonical args of a call (SPEC §2), its result_summary
 * and tokens_used are kept as text; parsing them into JavaScript values would turn `1.0` into
 * `1`, `-0.0` into `0`, `1e+16` into `10000000000000000` and 9223372036854775809 into
 * 9223372036854776000, and nobody could re-hash the answer to its args_hash. A {@link RawJson}
 * carries the text, and {@link stringifyWithRaw} splices it verbatim into the answer.
 *
 * Why placeholders rather than a JSON writer of our own: V8's JSON.stringify is several times
 * faster than any serializer written in JavaScript on the task view's ~140 KB answers, and
 * Node 20 has no `JSON.rawJSON`. Each RawJson becomes a short placeholder string during
 * JSON.stringify (one `toJSON` call per value, no replacer run on every key), and one regex pass
 * over the result swaps the placeholders for the stored text.
 */
import { RawNumber, type JsonValue } from './canonical-json.ts';

// A per-process nonce keeps stored strings from forging a placeholder: JSON.stringify writes the
// NUL as `\u0000`, which only a string that starts with NUL and knows the nonce could match.
const NONCE = Math.random().toString(36).slice(2, 12);
const MARK = `\u0000${NONCE}:`;
const PLACEHOLDER = new RegExp(`"\\\\u0000${NONCE}:(\\d+)"`, 'g');

// The texts met by the JSON.stringify in progress (it is synchronous; null outside of it).
let slots: string[] | null = null;

/** A JSON value kept as its text (valid JSON, by the writer that stored it). */
export class RawJson {
  constructor(readonly text: string) {}

  /**
   * Inside {@link stringifyWithRaw}: a placeholder for the text. Elsewhere (a log line, a plain
   * JSON.stringify) the parsed value, which is valid JSON but may round numbers.
   */
  toJSON(): unknown {
    if (slots === null) return JSON.parse(this.text) as unknown;
    slots.push(this.text);
    return `${MARK}${slots.length - 1}`;
  }
}

/** JSON.stringify(value, null, space), with every {@link RawJson} written as its stored text. */
export function stringifyWithRaw(value: unknown, space?: number): string {
  const outer = slots;
  slots = [];
  try {
    const json = JSON.stringify(value, null, space) as string | undefined;
    if (json === undefined) throw new TypeError('value is not serializable as JSON');
    const texts = slots;
    return texts.length === 0 ? json : json.replace(PLACEHOLDER, (_, i: string) => texts[Number(i)] as string);
  } finally {
    slots = outer;
  }
}

/** True for a RawJson whose text is a JSON object, or a plain object (what a JSON client parsed). */
export function isJsonObjectLike(v: unknown): v is RawJson | Record<string, unknown> {
  if (v instanceof RawJson) return v.text.startsWith('{');
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// A number literal between JSON delimiters (a string that looks like one only costs a parse).
const NUMBER_TOKEN = /[:,[]\s*(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(?=[,}\]])/g;

/**
 * True when JSON text holds a number literal that JSON.parse + JSON.stringify would not write back
 * as it is (`1.0`, `-0`, `1e+16`, integers past 2^53): only then does a value need the lossless
 * parser to be stored as sent. One regex pass; most packets have none.
 */
export function hasLossyNumber(text: string): boolean {
  NUMBER_TOKEN.lastIndex = 0;
  for (let m = NUMBER_TOKEN.exec(text); m !== null; m = NUMBER_TOKEN.exec(text)) {
    const lit = m[1] as string;
    if (String(Number(lit)) !== lit) return true;
  }
  return false;
}

/** Compact JSON (as JSON.stringify writes it) of a lossless-parsed value, number literals as written. */
export function stringifyLossless(value: JsonValue): string {
  return stringifyWithRaw(withRawNumbers(value));
}

function withRawNumbers(v: JsonValue): unknown {
  if (v instanceof RawNumber) return new RawJson(v.literal);
  if (Array.isArray(v)) return v.map(withRawNumbers);
  // fromEntries defines own members: a "__proto__" key stays a member, as JSON.parse keeps it.
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, withRawNumbers(x)]));
  return v;
}
