import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../../api/rate-limit.ts';

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
