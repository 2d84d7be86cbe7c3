/**
 * Redaction of a JSON value: every string in it scanned by the secret detectors, and
 * the values at configured paths (a tool's `password` argument) replaced whole. Returns the new
 * value and where each redaction was made, as JSON Pointers (RFC 6901) with the rule that made
 * it. Pure; the placeholder comes from the caller (secretMark with the deployment's key), so the
 * emitters, the MCP gateway and ingest redact the same value to the same text.
 */
import { isPlaceholder, redactString, type DetectOptions } from './secret-detectors.ts';

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

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A key as a JSON Pointer token (RFC 6901). */
export const escapePointer = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');
/** The JSON Pointer of a path of keys ('' is the value itself). */
const pointerOf = (at: readonly string[]) => at.map((k) => `/${escapePointer(k)}`).join('');

function pathMatches(path: readonly string[], at: readonly string[]): boolean {
  return path.length === at.length && path.every((p, i) => p === '*' || p === at[i]);
}

/**
 * `value` with its secrets replaced: a string's secrets by `mark(rule, secret)`, a configured
 * path's whole value by `mark('path', its JSON text)` (a string then, whatever it was).
 */
export function redactJson(value: unknown, mark: (rule: string, secret: string) => string, o: RedactOptions = {}): { value: unknown; redactions: Redaction[] } {
  const paths = (o.paths ?? []).map((p) => p.split('.'));
  const redactions: Redaction[] = [];
  const walk = (v: Json, at: string[]): Json => {
    // A value that is a placeholder already (redacted by the emitter) stays as it is.
    if (at.length > 0 && paths.some((p) => pathMatches(p, at)) && !(typeof v === 'string' && isPlaceholder(v))) {
      redactions.push({ pointer: pointerOf(at), rule: 'path' });
      return mark('path', typeof v === 'string' ? v : JSON.stringify(v));
    }
    if (typeof v === 'string') {
      const r = redactString(v, mark, o);
      for (const rule of r.rules) redactions.push({ pointer: pointerOf(at), rule });
      return r.text;
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...at, String(i)]));
    // Only plain objects are walked: a RawNumber of the lossless parser is a number, kept as it is.
    if (v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v) as object | null)) {
      const out: { [k: string]: Json } = {};
      // defineProperty: a key `__proto__` (JSON.parse makes it an own key) stays a key.
      for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: walk(x, [...at, k]), enumerable: true, writable: true, configurable: true });
      return out;
    }
    return v;
  };
  return { value: walk(value as Json, []), redactions };
}
