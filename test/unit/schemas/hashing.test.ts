/**
 * uuidV5 (schemas/hashing.ts) against the uuid package's v5, the oracle: the ids OTLP spans get
 * (call, output and turn ids) must stay what anyone recomputes with a UUID library.
 */
import { randomBytes } from 'node:crypto';
import { parse, v5 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { uuidV5 } from '../../../schemas/hashing.ts';

describe('uuidV5', () => {
  it("gives the uuid package's v5 for ASCII, non-ASCII, empty and long names in several namespaces", () => {
    const namespaces = ['6f1b6f2e-9a57-5c1e-8d0a-7c6f746c7370', v5.DNS, v5.URL, '00000000-0000-0000-0000-000000000000'];
    const names = ['', 'a', 'é😀 名前', `${randomBytes(16).toString('hex')}${randomBytes(8).toString('hex')}:turn`, 'x'.repeat(10_000)];
    for (let i = 0; i < 200; i++) names.push(randomBytes(1 + (i % 40)).toString('latin1'));
    for (const ns of namespaces) for (const name of names) expect(uuidV5(name, parse(ns))).toBe(v5(name, ns));
  });
});
