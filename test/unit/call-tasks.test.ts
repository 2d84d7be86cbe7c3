import { describe, expect, it } from 'vitest';
import { CallTasks } from '../../src/ingest/call-tasks.ts';

describe('CallTasks', () => {
  it('remembers the newest calls up to its capacity and forgets the oldest first', () => {
    const m = new CallTasks(3);
    for (const i of [1, 2, 3]) m.add(`c${i}`, `t${i}`);
    m.add('c1', 't1'); // seen again: young again
    m.add('c4', 't4');
    expect([m.get('c1'), m.get('c2'), m.get('c3'), m.get('c4')]).toEqual(['t1', undefined, 't3', 't4']);
    expect(m.size).toBe(3);
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
