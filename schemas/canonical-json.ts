/**
 * JSON written exactly as CPython's `json.dumps(value, sort_keys=…)` writes it with its
 * defaults (SPEC §2): separators `", "` and `": "`, every character outside printable ASCII
 * escaped as lowercase `\uXXXX` (UTF-16 units, so astral characters become surrogate pairs),
 * keys sorted by code point. Numbers are written as the producer wrote them: a
 * {@link RawNumber} keeps the literal from the wire, a JS number is written as JSON.stringify
 * writes it (which is how a JavaScript producer wrote it).
 */

/** A number literal kept verbatim from the JSON text it was parsed from. */
export class RawNumber {
  constructor(readonly literal: string) {}
}

/** A JSON value as parsed, possibly with {@link RawNumber}s in place of numbers. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | RawNumber
  | JsonValue[]
  | { [key: string]: JsonValue };

// JSON.stringify already writes what Python writes for `"`, `\\`, control characters (the same
// short escapes \b \f \n \r \t, lowercase `\u00xx` for the rest) and lone surrogates (lowercase
// `\udxxx`); Python's ensure_ascii additionally escapes DEL and everything above it, one UTF-16
// unit at a time (so astral characters become surrogate pairs).
// Printable ASCII other than `"` and `\` is written as is: the common case needs no copy.
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f-\uffff]/;
const NON_ASCII = /[\u007f-\uffff]/;
const NON_ASCII_ALL = /[\u007f-\uffff]/g;
const escapeUnit = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Writes a string literal as Python's `json.dumps` (ensure_ascii=True) does. */
export function pythonJsonString(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return `"${s}"`;
  const json = JSON.stringify(s);
  return NON_ASCII.test(json) ? json.replace(NON_ASCII_ALL, escapeUnit) : json;
}

/** Compares two strings by Unicode code point, as Python sorts str keys. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after every BMP unit above them in UTF-16 order.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** Options for {@link pythonJsonDumps}. */
export interface DumpOptions {
  /** Sort object keys by code point (`sort_keys=True`). */
  sortKeys: boolean;
}

/** Serializes a value as CPython's `json.dumps(value, sort_keys=opts.sortKeys)`. */
export function pythonJsonDumps(value: JsonValue, opts: DumpOptions): string {
  return write(value, opts.sortKeys);
}

// String concatenation (V8 ropes, flattened once by the caller's hash) beats collecting parts.
function write(value: JsonValue, sortKeys: boolean): string {
  if (typeof value === 'string') return pythonJsonString(value);
  if (typeof value === 'number') return JSON.stringify(value);
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (value instanceof RawNumber) return value.literal;
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ', ';
      out += write(value[i] as JsonValue, sortKeys);
    }
    return `${out}]`;
  }
  const keys = Object.keys(value);
  if (sortKeys && keys.length > 1) keys.sort(compareCodePoints);
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    if (i > 0) out += ', ';
    out += `${pythonJsonString(k)}: ${write(value[k] as JsonValue, sortKeys)}`;
  }
  return `${out}}`;
}

/** The canonical args string of SPEC §2: `json.dumps(args, sort_keys=True)`. */
export function canonicalArgs(args: JsonValue): string {
  return pythonJsonDumps(args, { sortKeys: true });
}
