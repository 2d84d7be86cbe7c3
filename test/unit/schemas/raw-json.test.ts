import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseKeepingRaw, parseLossless } from '../../../schemas/lossless-json.ts';
import { hasLossyNumber, RawJson, stringifyLossless, stringifyWithRaw } from '../../../schemas/raw-json.ts';
import type { JsonValue } from '../../../schemas/canonical-json.ts';

describe('RawJson', () => {
  it('is spliced verbatim, compact or indented, at any depth', () => {
    const args = '{"big": 9223372036854775809, "f": 1.0, "z": -0.0, "e": 1e+16, "u": "\\u00e9"}';
    const body = { a: [{ args: new RawJson(args), n: 1 }], t: null, s: 'x' };
    expect(stringifyWithRaw(body)).toBe(`{"a":[{"args":${args},"n":1}],"t":null,"s":"x"}`);
    expect(stringifyWithRaw(body, 2)).toContain(`"args": ${args},`);
  });

  it('cannot be forged by a stored string, and answers a plain JSON.stringify with the parsed value', () => {
    const forged = '\u0000abc:0';
    expect(JSON.parse(stringifyWithRaw({ s: forged, r: new RawJson('{"a":1.0}') }))).toEqual({ s: forged, r: { a: 1 } });
    expect(JSON.stringify({ r: new RawJson('{"a":1.0}') })).toBe('{"r":{"a":1}}');
  });

  it('survives a client parse: the kept text is what was served', () => {
    const args = '{"big": 9223372036854775809, "f": [1.0, -0.0]}';
    const text = stringifyWithRaw({ invocations: [{ args: new RawJson(args), tokens_used: null, n: 2.5 }] });
    const parsed = parseKeepingRaw(text, new Set(['args', 'tokens_used'])) as { invocations: { args: RawJson; tokens_used: null; n: number }[] };
    expect(parsed.invocations[0]?.args).toEqual(new RawJson(args));
    expect(parsed.invocations[0]?.tokens_used).toBeNull();
    expect(parsed.invocations[0]?.n).toBe(2.5);
    expect(stringifyWithRaw(parsed)).toBe(text);
  });

  it('parses like JSON.parse apart from the kept keys', () => {
    const proto = '{"__proto__": {"x": 1.0}, "a": [1]}';
    expect(parseKeepingRaw(proto, new Set())).toStrictEqual(JSON.parse(proto));
    expect(stringifyLossless(parseLossless(proto) as JsonValue)).toBe('{"__proto__":{"x":1.0},"a":[1]}');
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        expect(parseKeepingRaw(text, new Set(['args']))).toEqual(JSON.parse(text));
      }),
    );
  });
});

describe('hasLossyNumber / stringifyLossless', () => {
  it('finds the literals JSON.parse would rewrite, and only those', () => {
    for (const lossy of ['{"a": 1.0}', '{"a":-0}', '[1e+16]', '{"a": 9223372036854775809}', '{"a":1E5}', '[1, -0.0]']) expect(hasLossyNumber(lossy)).toBe(true);
    for (const exact of ['{"a": 1}', '{"a":0.25,"b":-3}', '[1e+22]', '{"t":"2026-01-01T00:00:00.100Z"}', '{"s":"1.0"}']) expect(hasLossyNumber(exact)).toBe(false);
  });

  it('never misses a lossy literal JSON.stringify would not reproduce', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        // JSON.stringify's own output is what JSON.parse reproduces: never lossy.
        expect(hasLossyNumber(text)).toBe(false);
      }),
    );
  });

  it('writes compact JSON with the literals as written', () => {
    const v = parseLossless('{ "big" : 18446744073709551617, "z": -0.0, "l": [1.0, "é"] }') as JsonValue;
    expect(stringifyLossless(v)).toBe('{"big":18446744073709551617,"z":-0.0,"l":[1.0,"é"]}');
  });
});
