/**
 * Numbers as CPython's `json.loads` then `json.dumps` write them (pure). A relay that did not
 * produce the args (the MCP gateway) hashes them as Python would on receipt: an integer literal
 * stays an integer (any size, `-0` is `0`), anything with a fraction or exponent becomes a float
 * written by `repr(float)` — shortest round-trip digits, fixed notation for exponents −4…15 with
 * at least one fractional digit (`1.0`), else `1e-07` / `1.5e+16`.
 */
import { RawNumber, type JsonValue } from './canonical-json.ts';

const INTEGER = /^-?\d+$/;

/** `repr(float(x))` in Python 3 (`Infinity` / `-Infinity` / `NaN` as json.dumps writes them). */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  // toExponential() gives the shortest digits that round-trip, as repr does.
  const [mantissa, exp] = x.toExponential().split('e') as [string, string];
  const e = Number(exp);
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  if (e < -4 || e >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
  const int = digits.slice(0, e + 1).padEnd(e + 1, '0');
  const frac = digits.slice(e + 1);
  return `${sign}${int}.${frac === '' ? '0' : frac}`;
}

/** A number literal from JSON text as Python writes it back. */
export function pythonNumberLiteral(literal: string): string {
  if (INTEGER.test(literal)) return literal === '-0' ? '0' : literal.replace(/^(-?)0+(?=\d)/, '$1');
  return pythonFloatRepr(Number(literal));
}

/**
 * The value with every number as Python would write it: RawNumbers (from a lossless parse)
 * by their literal, JavaScript numbers by value (an integral one is taken as an integer).
 */
export function withPythonNumbers(value: JsonValue): JsonValue {
  if (value instanceof RawNumber) return new RawNumber(pythonNumberLiteral(value.literal));
  if (typeof value === 'number') return new RawNumber(Number.isInteger(value) && Math.abs(value) < 2 ** 53 ? String(value === 0 ? 0 : value) : pythonFloatRepr(value));
  if (Array.isArray(value)) return value.map(withPythonNumbers);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    // defineProperty: a key named __proto__ is data, not the prototype.
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: withPythonNumbers(v), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}
