/** pythonJsonString against a character-by-character transcription of CPython's ensure_ascii encoder. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pythonJsonDumps, pythonJsonString, type JsonValue } from '../../../schemas/canonical-json.ts';

/** CPython's py_encode_basestring_ascii, written out. */
function referencePythonString(s: string): string {
  const short: Record<number, string> = { 0x22: '\\"', 0x5c: '\\\\', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t', 0x08: '\\b', 0x0c: '\\f' };
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c) out += s[i];
    else out += short[c] ?? `\\u${c.toString(16).padStart(4, '0')}`;
  }
  return `${out}"`;
}

describe('pythonJsonString', () => {
  it('matches the reference encoder on arbitrary UTF-16 strings, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) })), (s) => {
        expect(pythonJsonString(s)).toBe(referencePythonString(s));
      }),
      { numRuns: 5000 },
    );
    for (const s of ['', '\u007f', '\u0000\u001f', 'é', '😀', '\ud800', '\udfff', 'a"b\\c\n\t\r\b\f', '\u2028\u2029']) {
      expect(pythonJsonString(s)).toBe(referencePythonString(s));
    }
  });

  it('pythonJsonDumps writes nested values with sorted keys as json.dumps does', () => {
    const v = { b: [1, 'é', null, true, { z: 1, a: false }], a: -0.5, '😀': {}, é: [] } as JsonValue;
    expect(pythonJsonDumps(v, { sortKeys: true })).toBe('{"a": -0.5, "b": [1, "\\u00e9", null, true, {"a": false, "z": 1}], "\\u00e9": [], "\\ud83d\\ude00": {}}');
    expect(pythonJsonDumps(v, { sortKeys: false })).toBe('{"b": [1, "\\u00e9", null, true, {"z": 1, "a": false}], "a": -0.5, "\\ud83d\\ude00": {}, "\\u00e9": []}');
  });
});
