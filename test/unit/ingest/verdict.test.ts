import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conflictReason, judgeRound, judgeStored, KINDS, type Kind, type RoundPackets } from '../../../ingest/verdict.ts';

type P = { kind: Kind | undefined; key: string; fp: string };
type Status = 'accepted' | 'duplicate' | 'rejected';

const view = (ps: P[]): RoundPackets => ({
  size: ps.length,
  kindOf: (i) => ps[i]?.kind,
  key: (i) => ps[i]?.key ?? '',
  fp: (i) => ps[i]?.fp ?? '',
});

/** The verdict's statuses, with `known` = remembered, `stored` = what ClickHouse answers. */
function verdictStatuses(ps: P[], remembered: Map<string, string>, stored: Map<string, string>): Status[] {
  const v = judgeRound(view(ps), (kind, key) => remembered.get(`${kind}|${key}`));
  const asked = { invocation: new Map<string, string>(), output: new Map<string, string>(), dependency: new Map<string, string>(), hint: new Map<string, string>(), turn: new Map<string, string>(), run: new Map<string, string>() };
  // ClickHouse is asked only for the fresh keys: answer only those.
  for (const kind of KINDS) for (const key of v.fresh[kind].keys()) if (stored.has(`${kind}|${key}`)) asked[kind].set(key, stored.get(`${kind}|${key}`) as string);
  judgeStored(v, view(ps), asked);
  const out: Status[] = new Array(ps.length);
  for (const kind of KINDS) for (const i of v.fresh[kind].values()) out[i] = 'accepted';
  for (const i of v.duplicates) out[i] = 'duplicate';
  for (const r of v.rejected) out[r.i] = 'rejected';
  for (const f of v.followers) out[f.i] = 'duplicate';
  return out;
}

/** Oracle: each packet committed on its own, one after another, against a growing store. */
function sequential(ps: P[], stored: Map<string, string>): Status[] {
  const store = new Map(stored);
  return ps.map((p) => {
    if (p.kind === undefined) return 'rejected';
    const k = `${p.kind}|${p.key}`;
    const s = store.get(k);
    if (s === undefined) {
      store.set(k, p.fp);
      return 'accepted';
    }
    return s === p.fp ? 'duplicate' : 'rejected';
  });
}

const packet = fc.record({
  kind: fc.constantFrom<Kind | undefined>('invocation', 'output', 'dependency', undefined),
  key: fc.constantFrom('k1', 'k2', 'k3'),
  fp: fc.constantFrom('a', 'b'),
});
const storeEntry = fc.tuple(fc.constantFrom<Kind>('invocation', 'output', 'dependency'), fc.constantFrom('k1', 'k2', 'k3'), fc.constantFrom('a', 'b'), fc.boolean());

describe('round verdict (pure)', () => {
  it('judges a round exactly as packets committed one at a time, whatever the writer remembers', () => {
    fc.assert(
      fc.property(fc.array(packet, { maxLength: 30 }), fc.array(storeEntry, { maxLength: 9 }), (ps, entries) => {
        const stored = new Map<string, string>();
        const remembered = new Map<string, string>();
        for (const [kind, key, fp, inCache] of entries) {
          if (stored.has(`${kind}|${key}`)) continue;
          stored.set(`${kind}|${key}`, fp);
          // The writer's memory only ever holds what is stored.
          if (inCache) remembered.set(`${kind}|${key}`, fp);
        }
        expect(verdictStatuses(ps, remembered, stored)).toEqual(sequential(ps, stored));
      }),
      { numRuns: 2000 },
    );
  });

  it('rejects a packet reusing a stored key even when an earlier copy in the round was rejected, and keeps the stored one a duplicate', () => {
    // Stored k1 = a. The round sends b, then a, then b again: conflict, duplicate, conflict.
    const ps: P[] = [
      { kind: 'invocation', key: 'k1', fp: 'b' },
      { kind: 'invocation', key: 'k1', fp: 'a' },
      { kind: 'invocation', key: 'k1', fp: 'b' },
    ];
    expect(verdictStatuses(ps, new Map(), new Map([['invocation|k1', 'a']]))).toEqual(['rejected', 'duplicate', 'rejected']);
  });

  it('counts rejections judged before and after the look-up apart (only the late ones need a quarantine look-up)', () => {
    const ps: P[] = [
      { kind: undefined, key: '', fp: '' },
      { kind: 'output', key: 'k1', fp: 'b' },
      { kind: 'output', key: 'k2', fp: 'a' },
    ];
    const v = judgeRound(view(ps), (kind, key) => (kind === 'output' && key === 'k1' ? 'a' : undefined));
    expect(v.judgedFirst).toBe(2);
    judgeStored(v, view(ps), { invocation: new Map(), output: new Map([['k2', 'c']]), dependency: new Map(), hint: new Map(), turn: new Map(), run: new Map() });
    expect(v.rejected.map((r) => r.i)).toEqual([0, 1, 2]);
    expect(v.rejected.slice(v.judgedFirst)).toEqual([{ i: 2, conflict: { kind: 'output', key: 'k2' } }]);
  });

  it('names the I1 reason per kind', () => {
    expect(conflictReason('invocation', 'x').code).toBe('I1_call_id_reused');
    expect(conflictReason('output', 'x').code).toBe('I1_output_id_reused');
    expect(conflictReason('dependency', 'p>s')).toEqual({ code: 'I1_dependency_reused', message: 'a different packet with this dependency pair (p>s) already exists (I1)' });
  });
});
