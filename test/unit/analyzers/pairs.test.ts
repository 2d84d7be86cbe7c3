import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { linkCalls, type CallPoint } from '../../../analyzers/pairs.ts';
import { detectDataFlow, outputValues } from '../../../analyzers/data-flow.ts';
import { checkTaskPairs } from '../../../analyzers/audit-rules.ts';

const WINDOW = 60_000;

/** The specification, written the slow and obvious way. */
function bruteForce(calls: CallPoint[], windowMs: number): Set<string> {
  const out = new Set<string>();
  for (const a of calls) for (const b of calls) {
    const d = b.t - a.t;
    if (a.call_id !== b.call_id && d > 0 && d < windowMs) out.add(`${a.call_id}>${b.call_id}:${d}`);
  }
  return out;
}

// Timestamps cluster so that ties and exact 60 s boundaries are common.
const timeArb = fc.oneof(
  fc.integer({ min: 0, max: 200_000 }),
  fc.constantFrom(0, 1, 59_999, 60_000, 60_001, 120_000),
  fc.integer({ min: 0, max: 4 }).map((k) => k * 30_000),
);
const taskArb = fc.uniqueArray(fc.record({ call_id: fc.uuid(), tool_id: fc.constantFrom('search_web', 'fetch_url', 'python_execute'), t: timeArb }), {
  selector: (c) => c.call_id,
  maxLength: 40,
});

describe('linkCalls', () => {
  it('equals the brute-force pair set, whatever the arrival order and redeliveries', () => {
    // Deliveries: every call at least once, some twice or more, in a random order.
    const deliveries = taskArb.chain((calls) =>
      fc.tuple(
        fc.constant(calls),
        fc.array(fc.nat(), { maxLength: 20 }).chain((dups) => {
          const delivered = [...calls, ...dups.flatMap((i) => (calls.length ? [calls[i % calls.length] as CallPoint] : []))];
          return fc.shuffledSubarray(delivered, { minLength: delivered.length, maxLength: delivered.length });
        }),
      ),
    );
    fc.assert(
      fc.property(deliveries, ([calls, shuffled]) => {
        const got = linkCalls(shuffled, WINDOW).map((p) => `${p.preceding.call_id}>${p.succeeding.call_id}:${p.time_delta_ms}`);
        expect(new Set(got).size).toBe(got.length);
        expect(new Set(got)).toEqual(bruteForce(calls, WINDOW));
      }),
      { numRuns: 500 },
    );
  });

  it('treats same-millisecond calls as parallel and excludes exactly 60 s', () => {
    const c = (id: string, t: number) => ({ call_id: id, tool_id: 'x', t });
    const got = linkCalls([c('a', 0), c('b', 0), c('c', 59_999), c('d', 60_000)], WINDOW).map((p) => `${p.preceding.call_id}${p.succeeding.call_id}`);
    expect(got.sort()).toEqual(['ac', 'bc', 'cd']);
  });
});

describe('data flow', () => {
  it('finds a URL from a search result in a later fetch', () => {
    const flow = detectDataFlow([{ output_id: 'o1', content_type: 'json', sample: '{"urls": ["https://example.com/q3-report"]}' }], '{"url": "https://example.com/q3-report"}');
    expect(flow).toContain('https://example.com/q3-report');
  });
  it('finds a chart id and non-ASCII values as canonical args write them', () => {
    expect(detectDataFlow([{ output_id: 'o', content_type: 'chart_id', sample: 'chart-123456' }], '{"chart": "chart-123456"}')).not.toBeNull();
    expect(detectDataFlow([{ output_id: 'o', content_type: 'text', sample: 'Zürich office' }], '{"q": "Z\\u00fcrich office"}')).not.toBeNull();
  });
  it('says nothing when no value carries over, and ignores short values', () => {
    expect(detectDataFlow([{ output_id: 'o', content_type: 'json', sample: '{"n": 1, "s": "ab"}' }], '{"n": 1, "s": "ab"}')).toBeNull();
    expect(outputValues({ output_id: 'o', content_type: 'text', sample: 'ok' })).toEqual([]);
  });
});

describe('I10 check', () => {
  it('reports missing and duplicated pairs, nothing when each pair has one row', () => {
    const calls = [
      { call_id: 'a', tool_id: 's', t: 0 },
      { call_id: 'b', tool_id: 'f', t: 1000 },
      { call_id: 'c', tool_id: 'p', t: 2000 },
    ];
    const one = (p: string, s: string, n = 1) => ({ preceding_call_id: p, succeeding_call_id: s, n });
    expect(checkTaskPairs('t', calls, [one('a', 'b'), one('a', 'c'), one('b', 'c')], WINDOW)).toEqual([]);
    const v = checkTaskPairs('t', calls, [one('a', 'b', 2), one('b', 'c')], WINDOW);
    expect(v.map((x) => x.violation_key).sort()).toEqual(['I10/duplicated/a,b', 'I10/missing/a,c']);
  });
});
