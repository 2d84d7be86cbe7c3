/**
 * The web app's pure helpers: number formats, sparkline buckets, and the hook for sections
 * whose routes other issues add (shown only when /openapi.json publishes them).
 */
import { describe, expect, it } from 'vitest';
import { formatMs, formatPct, formatUsd } from '../../../web/app/format.ts';
import { curveOf, offeredSections, OPTIONAL_SECTIONS, rowsOf } from '../../../web/app/optional-sections.ts';
import { bucketSeconds, densify } from '../../../web/app/series.ts';
import { hoursOf, lastHours } from '../../../web/app/window.ts';

describe('formats', () => {
  it('prints durations, money and shares', () => {
    expect([formatMs(850), formatMs(1234), formatMs(30_000), formatMs(125_000), formatMs(null)]).toEqual(['850 ms', '1.23 s', '30.0 s', '2 min 05 s', '–']);
    expect([formatUsd(0.005), formatUsd(1.5), formatUsd(1234.5), formatUsd(0), formatUsd(null)]).toEqual(['$0.0050', '$1.500', '$1234.50', '$0', '–']);
    expect(formatPct(0.975)).toBe('97.5%');
  });
});

describe('sparkline series', () => {
  it('chooses buckets of at least a minute and fills the gaps with zeros', () => {
    expect(bucketSeconds(1)).toBe(120);
    expect(bucketSeconds(24)).toBe(1800);
    const from = Date.UTC(2026, 0, 1);
    const d = densify([{ time: new Date(from + 1_800_000).toISOString(), calls: 3, cost_usd: 0.5 }, { time: new Date(from + 3 * 1_800_000).toISOString(), calls: 1, cost_usd: 0 }], from, 1800, 5);
    expect(d).toEqual({ calls: [0, 3, 0, 1, 0], cost: [0, 0.5, 0, 0, 0] });
  });
});

describe('window', () => {
  it('reads ?hours= among the offered choices, 24 otherwise', () => {
    expect(hoursOf(new URLSearchParams('hours=6'))).toBe(6);
    expect(hoursOf(new URLSearchParams('hours=5'))).toBe(24);
    expect(lastHours(1, Date.UTC(2026, 0, 1, 12))).toEqual({ from: '2026-01-01T11:00:00.000Z', to: '2026-01-01T12:00:00.000Z' });
  });
});

describe('optional waste sections', () => {
  it('are offered only when the server publishes their route', () => {
    expect(offeredSections(new Set(['/v1/tools', '/v1/dedup/candidates']))).toEqual([]);
    expect(offeredSections(new Set(['/v1/cache/ttl-curve', '/v1/budgets'])).map((s) => s.id)).toEqual(['cache-ttl', 'budgets']);
    expect(OPTIONAL_SECTIONS.every((s) => s.path.startsWith('/v1/'))).toBe(true);
  });

  it('read an answer generically: its first array of objects, and a curve over its first numeric column', () => {
    const answer = { tool_id: 'x', points: [{ ttl_s: 60, hit_rate: 0.2, savings_usd: 1 }, { ttl_s: 300, hit_rate: 0.5, savings_usd: 3, extra: { a: 1 } }] };
    const rows = rowsOf(answer);
    expect(rows[1]).toEqual({ ttl_s: 300, hit_rate: 0.5, savings_usd: 3, extra: '{"a":1}' });
    expect(curveOf(rows)).toEqual({ x: 'ttl_s', xs: [60, 300], series: [{ name: 'hit_rate', values: [0.2, 0.5] }, { name: 'savings_usd', values: [1, 3] }] });
    expect(rowsOf({ budgets: [] })).toEqual([]);
    expect(curveOf([{ name: 'a', spent: 1 }])).toBeNull();
  });
});
