import { describe, expect, it } from 'vitest';
import { MAX_TIME_MS, plainListQuery, windowOf } from '../../../api/read-params.ts';

const DEFAULTS = { windowDays: 30, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 };

describe('read parameters', () => {
  it('parses ISO timestamps with or without offset (UTC) and plain dates', () => {
    const q = (s: Record<string, string>) => plainListQuery.parse(s);
    expect(q({ from: '2026-11-22T10:00:00Z' }).from).toBe(Date.UTC(2026, 10, 22, 10));
    expect(q({ from: '2026-11-22T12:00:00+02:00' }).from).toBe(Date.UTC(2026, 10, 22, 10));
    expect(q({ from: '2026-11-22T10:00:00' }).from).toBe(Date.UTC(2026, 10, 22, 10));
    expect(q({ from: '2026-11-22' }).from).toBe(Date.UTC(2026, 10, 22));
    expect(q({ limit: '1000' }).limit).toBe(1000);
    for (const bad of [{ from: 'yesterday' }, { from: '2026-02-30T00:00:00Z' }, { limit: '1001' }, { limit: '1.5' }, { limit: '-1' }, { cursor: '' }, { extra: '1' }]) {
      expect(plainListQuery.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('defaults the window to the last N days with no upper bound, takes from = to as the empty range, and refuses from > to', () => {
    const now = Date.UTC(2026, 10, 22);
    expect(windowOf({}, DEFAULTS, now)).toEqual({ fromMs: now - 30 * 86_400_000, toMs: MAX_TIME_MS });
    expect(windowOf({}, DEFAULTS, now, true)).toEqual({ fromMs: 0, toMs: MAX_TIME_MS });
    expect(windowOf({ from: 5, to: 5 }, DEFAULTS, now)).toEqual({ fromMs: 5, toMs: 5 });
    expect(() => windowOf({ from: 6, to: 5 }, DEFAULTS, now)).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
  });
});
