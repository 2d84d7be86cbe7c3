import { describe, expect, it } from 'vitest';
import { CallTasks } from '../../src/ingest/call-tasks.ts';

describe('CallTasks', () => {
  it('remembers at least the newest capacity/2 calls and at most capacity, forgetting the oldest', () => {
    const m = new CallTasks(4);
    for (let i = 1; i <= 7; i++) m.add(`c${i}`, `t${i}`);
    // Generations of two: the newest two calls are always known, c1 long forgotten.
    expect(m.get('c7')).toBe('t7');
    expect(m.get('c6')).toBe('t6');
    expect(m.get('c1')).toBeUndefined();
    expect(m.size).toBeGreaterThanOrEqual(2);
    expect(m.size).toBeLessThanOrEqual(4);
  });

  it('stays linear when it evicts: 2 million calls through a 200 000-call memory in under 5 s (a one-Map FIFO took 80 s for 1 million)', () => {
    const m = new CallTasks(200_000);
    const start = performance.now();
    for (let i = 0; i < 2_000_000; i++) m.add(`call-${i}`, 'task');
    expect(performance.now() - start).toBeLessThan(5_000);
    expect(m.get('call-1999999')).toBe('task');
    expect(m.get('call-0')).toBeUndefined();
  });

  it("knows a call without a task ('' is an answer, unlike undefined); capacity 0 keeps nothing", () => {
    const m = new CallTasks(3);
    m.add('c1', '');
    expect(m.get('c1')).toBe('');
    expect(m.get('c2')).toBeUndefined();
    const none = new CallTasks(0);
    none.add('c1', 't1');
    expect(none.get('c1')).toBeUndefined();
  });
});
