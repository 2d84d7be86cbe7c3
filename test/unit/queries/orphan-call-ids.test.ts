import { describe, expect, it } from 'vitest';
import { OrphanCallIds, type OrphanSnapshot } from '../../../queries/orphan-call-ids.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('OrphanCallIds', () => {
  it('waits for the first snapshot; its tail starts at the server clock minus the margin', async () => {
    const loads: OrphanSnapshot[] = [{ ids: ['a'], nowMs: 10_000 }];
    const o = new OrphanCallIds(async () => loads.shift() as OrphanSnapshot, { refreshMs: 60_000, marginMs: 1_000 });
    expect(await o.tailStart()).toBe(9_000);
    expect([o.has('a'), o.has('b')]).toEqual([true, false]);
  });

  it('refreshes in the background once stale, answering from the old snapshot meanwhile', async () => {
    let release: (s: OrphanSnapshot) => void = () => undefined;
    let n = 0;
    const o = new OrphanCallIds(
      () => (n++ === 0 ? Promise.resolve({ ids: ['a'], nowMs: 5_000 }) : new Promise<OrphanSnapshot>((r) => (release = r))),
      { refreshMs: 0, marginMs: 0 },
    );
    expect(await o.tailStart()).toBe(5_000);
    await sleep(2);
    expect(await o.tailStart()).toBe(5_000); // refresh started, not landed: old cutoff and ids
    expect(await o.tailStart()).toBe(5_000); // one refresh at a time
    expect(n).toBe(2);
    release({ ids: ['a', 'b'], nowMs: 9_000 });
    await sleep(0);
    expect(o.has('b')).toBe(true);
    expect(await o.tailStart()).toBe(9_000);
  });

  it('a failed background refresh keeps the last snapshot', async () => {
    let n = 0;
    const o = new OrphanCallIds(async () => {
      if (n++ === 0) return { ids: ['a'], nowMs: 1_000 };
      throw new Error('down');
    }, { refreshMs: 0, marginMs: 0 });
    await o.tailStart();
    await sleep(2);
    expect(await o.tailStart()).toBe(1_000);
    await sleep(0);
    expect(o.has('a')).toBe(true);
  });
});
