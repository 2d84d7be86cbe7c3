import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../../api/rate-limit.ts';
import { BadRequest, MAX_TIME_MS, plainListQuery, windowOf } from '../../../api/read-params.ts';

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

  it('defaults the window to the last N days with no upper bound, and refuses from ≥ to', () => {
    const now = Date.UTC(2026, 10, 22);
    expect(windowOf({}, DEFAULTS, now)).toEqual({ fromMs: now - 30 * 86_400_000, toMs: MAX_TIME_MS });
    expect(windowOf({}, DEFAULTS, now, true)).toEqual({ fromMs: 0, toMs: MAX_TIME_MS });
    expect(() => windowOf({ from: 5, to: 5 }, DEFAULTS, now)).toThrow(BadRequest);
  });
});

describe('rate limiter', () => {
  it('allows a burst, then one request per refill interval, per client', async () => {
    let t = 0;
    const limiter = createRateLimiter({ perMinute: 60, burst: 2, now: () => t });
    const calls: number[] = [];
    const reply = () => {
      const r = { code: (c: number) => (calls.push(c), r), header: () => r, send: async () => r };
      return r;
    };
    const req = (key: string) => ({ headers: { authorization: `Bearer ${key}` }, ip: '1.2.3.4' }) as never;
    const hit = async (key = 'k1') => {
      const before = calls.length;
      await limiter(req(key), reply() as never);
      return calls.length === before ? 200 : calls[calls.length - 1];
    };
    expect([await hit(), await hit(), await hit()]).toEqual([200, 200, 429]);
    expect(await hit('k2')).toBe(200);
    t += 1000;
    expect([await hit(), await hit()]).toEqual([200, 429]);
  });
});
