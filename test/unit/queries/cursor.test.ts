import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cursorCodec, msKey, uuidKey } from '../../../queries/cursor.ts';

const codec = cursorCodec('list_a', z.tuple([msKey, uuidKey]));
const UUID = '0f8fad5b-d9cb-469f-a165-70867728950e';

describe('cursors', () => {
  it('round-trips the sort key as an opaque base64url token', () => {
    const c = codec.encode([1_763_000_000_123, UUID]);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(codec.decode(c)).toEqual([1_763_000_000_123, UUID]);
  });

  it('refuses cursors of another list, tampered, malformed or oversized', () => {
    const other = cursorCodec('list_b', z.tuple([msKey, uuidKey])).encode([1, UUID]);
    const tampered = Buffer.from(JSON.stringify(['list_a', [1, "x' OR 1=1"]])).toString('base64url');
    const negative = Buffer.from(JSON.stringify(['list_a', [-5, UUID]])).toString('base64url');
    for (const bad of [other, tampered, negative, '%%%', 'bm90IGpzb24', 'A'.repeat(5000), '']) {
      expect(() => codec.decode(bad), bad.slice(0, 20)).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    }
  });
});
