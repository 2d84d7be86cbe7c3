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

const SHORT_ESCAPES: Record<number, string> = {
  0x22: '\\"',
  0x5c: '\\\\',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x08: '\\b',
  0x0c: '\\f',
};

// Printable ASCII other than `"` and `\` is written as is; anything else is escaped.
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f-\uffff]/;

/** Writes a string literal as Python's `json.dumps` (ensure_ascii=True) does. */
export function pythonJsonString(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return `"${s}"`;
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c) continue;
    if (i > start) out += s.slice(start, i);
    out += SHORT_ESCAPES[c] ?? `\\u${c.toString(16).padStart(4, '0')}`;
    start = i + 1;
  }
  return `${out}${s.slice(start)}"`;
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
  const parts: string[] = [];
  write(value, opts.sortKeys, parts);
  return parts.join('');
}

function write(value: JsonValue, sortKeys: boolean, out: string[]): void {
  if (value === null) out.push('null');
  else if (value === true) out.push('true');
  else if (value === false) out.push('false');
  else if (typeof value === 'string') out.push(pythonJsonString(value));
  else if (typeof value === 'number') out.push(JSON.stringify(value));
  else if (value instanceof RawNumber) out.push(value.literal);
  else if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(', ');
      write(value[i] as JsonValue, sortKeys, out);
    }
    out.push(']');
  } else {
    const keys = Object.keys(value);
    if (sortKeys) keys.sort(compareCodePoints);
    out.push('{');
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      if (i > 0) out.push(', ');
      out.push(pythonJsonString(k), ': ');
      write(value[k] as JsonValue, sortKeys, out);
    }
    out.push('}');
  }
}

/** The canonical args string of SPEC §2: `json.dumps(args, sort_keys=True)`. */
export function canonicalArgs(args: JsonValue): string {
  return pythonJsonDumps(args, { sortKeys: true });
}
