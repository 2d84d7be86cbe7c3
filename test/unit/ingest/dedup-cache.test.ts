import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContentSeen, DedupCache } from '../../../ingest/dedup-cache.ts';

const hex32 = () => randomUUID().replace(/-/g, '');

describe('DedupCache', () => {
  it('behaves like a FIFO-bounded map per kind, for UUID and other keys', () => {
    const uuids: string[] = Array.from({ length: 60 }, () => randomUUID());
    // v7-like ids sharing long prefixes exercise the probe chains.
    uuids.push(...Array.from({ length: 20 }, (_, i) => `0190a5b2-7c3d-7${String(i).padStart(3, '0')}-8000-000000000000`));
    const fps = Array.from({ length: 8 }, hex32);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.array(
          fc.tuple(
            fc.constantFrom('add', 'get'),
            fc.constantFrom('invocation', 'output', 'dependency'),
            fc.oneof(fc.integer({ min: 0, max: uuids.length - 1 }).map((i) => uuids[i] as string), fc.constantFrom('a>b', 'x>y', 'not-a-uuid')),
            fc.integer({ min: 0, max: fps.length - 1 }).map((i) => fps[i] as string),
          ),
          { maxLength: 400 },
        ),
        (capacity, ops) => {
          const cache = new DedupCache(capacity);
          // Reference: one FIFO map for UUID keys, one for the rest, first fingerprint wins.
          const compact = new Map<string, string>();
          const other = new Map<string, string>();
          const isUuid = (k: string) => /^[0-9a-f-]{36}$/.test(k);
          for (const [op, kind, key, fp] of ops) {
            const ref = isUuid(key) ? compact : other;
            const id = `${kind}:${key}`;
            if (op === 'add') {
              if (ref === compact && ref.has(id)) continue;
              ref.set(id, fp);
              if (ref.size > capacity) ref.delete(ref.keys().next().value as string);
              cache.add(kind, key, fp);
            } else {
              expect(cache.get(kind, key)).toBe(ref.get(id));
              expect(cache.get(kind, key, fp)).toBe(ref.get(id));
            }
          }
          for (const k of [...compact.keys(), ...other.keys()]) {
            const [kind, ...rest] = k.split(':');
            expect(cache.get(kind as string, rest.join(':'))).toBe((compact.get(k) ?? other.get(k)) as string);
          }
          expect(cache.size).toBe(compact.size + other.size);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('evicts the oldest of many entries and stays exact', () => {
    const cache = new DedupCache(100_000);
    const keys = Array.from({ length: 150_000 }, () => randomUUID());
    keys.forEach((k, i) => cache.add('invocation', k, i.toString(16).padStart(32, '0')));
    expect(cache.size).toBe(100_000);
    expect(cache.get('invocation', keys[0] as string)).toBeUndefined();
    expect(cache.get('invocation', keys[149_999] as string)).toBe((149_999).toString(16).padStart(32, '0'));
    expect(cache.get('output', keys[149_999] as string)).toBeUndefined();
    expect(cache.get('invocation', keys[60_000] as string)).toBe((60_000).toString(16).padStart(32, '0'));
  });

  it('is inert with capacity 0', () => {
    const cache = new DedupCache(0);
    cache.add('invocation', randomUUID(), hex32());
    cache.add('dependency', 'a>b', hex32());
    expect(cache.size).toBe(0);
  });
});

describe('ContentSeen', () => {
  it('behaves like a FIFO-bounded map of content hash to last_seen', () => {
    const hashes = Array.from({ length: 50 }, () => hex32() + hex32());
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: hashes.length - 1 }), fc.integer({ min: 0, max: 1e12 })), { maxLength: 300 }),
        (capacity, ops) => {
          const seen = new ContentSeen(capacity);
          const ref = new Map<string, number>();
          for (const [set, h, ms] of ops) {
            const hash = hashes[h] as string;
            if (set) {
              if (!ref.has(hash)) {
                ref.set(hash, ms);
                if (ref.size > capacity) ref.delete(ref.keys().next().value as string);
              } else ref.set(hash, ms);
              seen.set(hash, ms);
            } else expect(seen.get(hash)).toBe(ref.get(hash));
          }
          for (const h of hashes) expect(seen.get(h)).toBe(ref.get(h));
        },
      ),
      { numRuns: 300 },
    );
    expect(new ContentSeen(10).get('not-a-hash')).toBeUndefined();
  });
});
