import { describe, expect, it } from 'vitest';
import { FifoMap } from '../../../ingest/fifo-map.ts';

describe('FifoMap (the writer\'s call → task memory)', () => {
  it('remembers the newest calls up to its capacity, forgetting the oldest', () => {
    const m = new FifoMap<string>(4);
    for (let i = 1; i <= 7; i++) m.set(`c${i}`, `t${i}`);
    expect(m.get('c7')).toBe('t7');
    expect(m.get('c6')).toBe('t6');
    expect(m.get('c1')).toBeUndefined();
    expect(m.size).toBeGreaterThanOrEqual(2);
    expect(m.size).toBeLessThanOrEqual(4);
  });

  it('stays linear when it evicts: 2 million calls through a 200 000-call memory in seconds, not minutes (evicting through Map.keys() took 80 s for 1 million)', () => {
    const m = new FifoMap<string>(200_000);
    const start = performance.now();
    for (let i = 0; i < 2_000_000; i++) m.set(`call-${i}`, 'task');
    // Linear: ~1.5 s on a quiet machine, ~7 s on a loaded one; the quadratic eviction took minutes.
    expect(performance.now() - start).toBeLessThan(20_000);
    expect(m.get('call-1999999')).toBe('task');
    expect(m.get('call-0')).toBeUndefined();
  });

  it("knows a call without a task ('' is an answer, unlike undefined); capacity 0 keeps nothing", () => {
    const m = new FifoMap<string>(3);
    m.set('c1', '');
    expect(m.get('c1')).toBe('');
    expect(m.get('c2')).toBeUndefined();
    const none = new FifoMap<string>(0);
    none.set('c1', 't1');
    expect(none.get('c1')).toBeUndefined();
  });
});
