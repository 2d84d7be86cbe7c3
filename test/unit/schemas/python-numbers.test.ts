/**
 * Numbers as CPython writes them, against CPython itself: python3 reads each literal with
 * json.loads and writes it with json.dumps; pythonNumberLiteral must give the same text, for
 * hand-picked edges and thousands of random doubles.
 */
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalArgs } from '../../../schemas/canonical-json.ts';
import { parseLossless } from '../../../schemas/lossless-json.ts';
import { pythonFloatRepr, pythonNumberLiteral, withPythonNumbers } from '../../../schemas/python-numbers.ts';

function cpython(literals: string[]): string[] {
  const script = 'import sys, json\nfor line in sys.stdin.read().split("\\n"):\n    print(json.dumps(json.loads(line)))';
  return execFileSync('python3', ['-c', script], { input: literals.join('\n') }).toString().trim().split('\n');
}

const EDGES = ['0', '-0', '1', '-1', '0.0', '-0.0', '1.0', '2.5', '1e-7', '-2e-7', '1e-4', '1.5e-5', '0.0001', '0.00001', '1e16', '1e15', '123456789012345.6', '1234567890123456.7', '1e21', '1e22', '5e-324', '1.7976931348623157e308', '12345678901234567890', '0.1', '0.30000000000000004', '100', '1E5', '3.14159e+2', '9007199254740993', '-123.456e-10'];

describe('pythonNumberLiteral', () => {
  it('writes every edge literal as CPython does', () => {
    expect(EDGES.map(pythonNumberLiteral)).toEqual(cpython(EDGES));
  });

  it('writes random doubles as repr(float)', () => {
    const doubles = fc.sample(fc.double({ noNaN: true, noDefaultInfinity: true }), 3000).map((d) => d.toExponential());
    expect(doubles.map(pythonNumberLiteral)).toEqual(cpython(doubles));
  });

  it('infinities as json.dumps writes them', () => {
    expect(pythonFloatRepr(Infinity)).toBe('Infinity');
    expect(pythonNumberLiteral('1e400')).toBe('Infinity');
  });
});

describe('withPythonNumbers', () => {
  it('the canonical args of a lossless parse are CPython json.dumps(sort_keys=True) of json.loads', () => {
    const text = '{"b": [1.0, -0, 2e-7, {"z": 1e16, "a": 12345678901234567890}], "a": 0.1, "__proto__": 3}';
    const script = 'import sys, json\nprint(json.dumps(json.loads(sys.stdin.read()), sort_keys=True))';
    const expected = execFileSync('python3', ['-c', script], { input: text }).toString().trim();
    expect(canonicalArgs(withPythonNumbers(parseLossless(text) as never))).toBe(expected);
  });
});
