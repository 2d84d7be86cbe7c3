import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalArgs, compareCodePoints, type JsonValue } from '../../../schemas/canonical-json.ts';
import { argsHash } from '../../../schemas/hashing.ts';
import { parseLossless } from '../../../schemas/lossless-json.ts';

const fixture = new URL('../../fixtures/args_hash.jsonl', import.meta.url);
const lines = (u: URL) => readFileSync(u, 'utf8').split('\n').filter(Boolean);
const vectors = lines(fixture).map((l) => JSON.parse(l) as { args: JsonValue; canonical: string; args_hash: string });

describe('canonical args (SPEC §2) against the CPython vectors', () => {
  it('has the vectors (made by CPython, kept in the repository)', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(10);
  });

  it.each(vectors.map((v, i) => [i, v] as const))('vector %i: canonical string and hash', (_i, v) => {
    expect(canonicalArgs(v.args)).toBe(v.canonical);
    expect(argsHash(v.args)).toBe(v.args_hash);
  });
});

describe('canonical args produced by CPython json.dumps (fixture made by scripts/gen-python-fixtures.py)', () => {
  const py = lines(new URL('../../fixtures/python-packets.jsonl', import.meta.url)).map(
    (l) => JSON.parse(l) as { packet: string; canonical: string },
  );
  it.each(py.map((p, i) => [i, p] as const))('packet %i: literal-preserving parse reproduces the canonical text', (_i, p) => {
    const parsed = parseLossless(p.packet) as { invocation: { args: JsonValue } };
    expect(canonicalArgs(parsed.invocation.args)).toBe(p.canonical);
  });
});

describe('code point ordering', () => {
  it('sorts astral characters after U+FFFF like Python does', () => {
    expect(['\u{1F600}', '\uffff', 'a'].sort(compareCodePoints)).toEqual(['a', '\uffff', '\u{1F600}']);
    expect(compareCodePoints('ab', 'a')).toBeGreaterThan(0);
  });
});
