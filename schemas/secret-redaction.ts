/**
 * Redaction of a JSON value: every string in it scanned by the secret detectors, and
 * the values at configured paths (a tool's `password` argument) replaced whole. Returns the new
 * value and where each redaction was made, as JSON Pointers (RFC 6901) with the rule that made
 * it. Pure; the placeholder comes from the caller (secretMark with the deployment's key), so the
 * emitters, the MCP gateway and ingest redact the same value to the same text.
 */
import { pythonJsonDumps, RawNumber, type JsonValue } from './canonical-json.ts';
import { parseLossless } from './lossless-json.ts';
import { withPythonNumbers } from './python-numbers.ts';
import { isCardNumber, isPlaceholder, mayHoldSecret, readsAsWritten, redactString, secretName, type DetectOptions } from './secret-detectors.ts';

/** One redaction: where (a JSON Pointer into the value) and by which rule (`path` for a configured path). */
export interface Redaction {
  pointer: string;
  rule: string;
}

/** How to redact a value. */
export interface RedactOptions extends DetectOptions {
  /**
   * Paths whose whole value is a secret, dot-separated keys with `*` for any key or index:
   * `password`, `auth.token`, `headers.*`. Matched against the value's own keys (for args: the
   * argument names).
   */
  paths?: readonly string[];
}

type Json = null | boolean | number | string | RawNumber | Json[] | { [k: string]: Json };

/** A key as a JSON Pointer token (RFC 6901). */
export const escapePointer = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');
/** The JSON Pointer of a path of keys ('' is the value itself). */
const pointerOf = (at: readonly string[]) => at.map((k) => `/${escapePointer(k)}`).join('');

function pathMatches(path: readonly string[], at: readonly string[]): boolean {
  return path.length === at.length && path.every((p, i) => p === '*' || p === at[i]);
}

/** A number's text: the literal a lossless parse kept, else JavaScript's. */
const numberText = (v: number | RawNumber) => (v instanceof RawNumber ? v.literal : String(v));

const isPlainObject = (v: object) => [Object.prototype, null].includes(Object.getPrototypeOf(v) as object | null);

/** Keys of a name/value pair written as an object (`{"name": "X-Api-Key", "value": "…"}`: HAR headers, env lists). */
const PAIR_NAMES = ['name', 'key', 'header'];

/**
 * `value` with its secrets replaced: a string's secrets by `mark(rule, secret)`; every string or
 * number under a secret's name ({@link secretName}: an object key, the first of a `[name, value]`
 * pair, the `name` beside a `value`) whole, as `secret_name`; a number that is a card number; a
 * key that holds a secret; a configured path's whole value by `mark('path', its JSON text)` (a
 * string then, whatever it was).
 */
export function redactJson(value: unknown, mark: (rule: string, secret: string) => string, o: RedactOptions = {}): { value: unknown; redactions: Redaction[] } {
  const paths = (o.paths ?? []).map((p) => p.split('.'));
  const redactions: Redaction[] = [];
  const whole = (rule: string, text: string, at: string[]) => {
    redactions.push({ pointer: pointerOf(at), rule });
    return mark(rule, text);
  };
  const walk = (v: Json, at: string[], secret: boolean): Json => {
    // A value that is a placeholder already (redacted by the emitter) stays as it is.
    if (at.length > 0 && paths.some((p) => pathMatches(p, at)) && !(typeof v === 'string' && isPlaceholder(v))) return whole('path', typeof v === 'string' ? v : JSON.stringify(v), at);
    if (typeof v === 'string') {
      if (secret) return v === '' || isPlaceholder(v) ? v : whole('secret_name', v, at);
      if (isJsonText(v)) {
        // Nothing a detector or a secret's name starts from, and no path that could reach inside:
        // no parse (the text detectors would find nothing either).
        if (paths.length === 0 && readsAsWritten(v) && !mayHoldSecret(v, o)) return v;
        const inner = parseLossless(v) as Json | undefined;
        if (inner !== undefined) return walkInside(v, inner, at);
      }
      const r = redactString(v, mark, o);
      for (const rule of r.rules) redactions.push({ pointer: pointerOf(at), rule });
      return r.text;
    }
    if (typeof v === 'number' || v instanceof RawNumber) {
      if (secret) return whole('secret_name', numberText(v), at);
      // A card number has 13 digits or more: smaller numbers (most of them) are not written out.
      const big = v instanceof RawNumber ? v.literal.length >= 13 : Number.isInteger(v) && Math.abs(v) >= 1e12;
      return big && isCardNumber(numberText(v)) ? whole('card_number', numberText(v), at) : v;
    }
    if (Array.isArray(v)) {
      const pair = !secret && v.length === 2 && typeof v[0] === 'string' && secretName(v[0]);
      return v.map((x, i) => walk(x, [...at, String(i)], secret || (pair && i === 1)));
    }
    // Only plain objects are walked: a RawNumber of the lossless parser is handled above.
    if (v !== null && typeof v === 'object' && isPlainObject(v)) {
      const named = PAIR_NAMES.some((n) => typeof v[n] === 'string' && secretName(v[n]));
      const out: { [k: string]: Json } = {};
      for (const [k, x] of Object.entries(v)) {
        // A key may hold a secret itself (a token used as a map key).
        // (A key of under 8 characters holds no secret any detector finds: most keys, not scanned.)
        const key = k.length >= 8 && mayHoldSecret(k, o) ? redactString(k, mark, o) : { text: k, rules: [] };
        for (const rule of key.rules) redactions.push({ pointer: pointerOf([...at, key.text]), rule });
        const child = walk(x, [...at, key.text], secret || secretName(k) || (named && k === 'value'));
        // defineProperty: a key `__proto__` (JSON.parse makes it an own key) stays a key.
        Object.defineProperty(out, key.text, { value: child, enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return v;
  };
  // A JSON text inside a string is judged as the JSON it holds, and written back (only when it
  // held a secret) as Python's json.dumps writes it, so every emitter writes the same bytes. A
  // pointer cannot address inside a string: what was found there is recorded at the string.
  const walkInside = (text: string, inner: Json, at: string[]): Json => {
    const before = redactions.length;
    const out = walk(inner, at, false);
    if (redactions.length === before) return text;
    const pointer = pointerOf(at);
    for (let i = before; i < redactions.length; i++) (redactions[i] as Redaction).pointer = pointer;
    return pythonJsonDumps(withPythonNumbers(out as JsonValue), { sortKeys: false });
  };
  return { value: walk(value as Json, [], false), redactions };
}

/**
 * A text with its secrets replaced; a text that holds a JSON array or object is judged as that
 * JSON (as a string inside a value is: {@link redactJson}).
 */
export function redactText(text: string, mark: (rule: string, secret: string) => string, o: DetectOptions = {}): string {
  return isJsonText(text) ? (redactJson(text, mark, o).value as string) : redactString(text, mark, o).text;
}

/** JSON white space, the only characters JSON.parse and Python's json.loads allow around a value. */
const JSON_SPACE = /^[ \t\n\r]*[[{]/;

/**
 * Whether a string may be an array or object as JSON text (an MCP result's text block, OpenAI's
 * `arguments`, a model's message list): the walk then parses it, numbers kept as written. Such a
 * text carries its secrets escaped (`{\"password\": \"…\"}`) where no text detector reads them
 * as a secret's name and value.
 */
const isJsonText = (s: string): boolean => s.length > 1 && JSON_SPACE.test(s);
