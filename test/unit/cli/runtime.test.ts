import { describe, expect, it } from 'vitest';
import { REPEAT_SIGNAL_GRACE_MS, shutdownHandler } from '../../../cli/runtime.ts';
import { silentLogger } from '../../../platform/logger.ts';

/** A handler over a stop the test finishes by hand, a recorded exit and a settable clock. */
function harness() {
  const exits: number[] = [];
  let clock = 1_000_000;
  let stops = 0;
  let finish: (err?: Error) => void = () => {};
  const stop = () => {
    stops++;
    return new Promise<void>((resolve, reject) => (finish = (err) => (err ? reject(err) : resolve())));
  };
  const handle = shutdownHandler(silentLogger(), stop, (code) => exits.push(code), () => clock);
  return {
    handle,
    exits,
    stops: () => stops,
    finish: (err?: Error) => finish(err),
    advance: (ms: number) => (clock += ms),
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('shutdownHandler', () => {
  it('stops once and exits 0 when stop resolves', async () => {
    const h = harness();
    h.handle('SIGTERM');
    expect(h.stops()).toBe(1);
    expect(h.exits).toEqual([]);
    h.finish();
    await settle();
    expect(h.exits).toEqual([0]);
  });

  it('exits 1 when stop fails', async () => {
    const h = harness();
    h.handle('SIGTERM');
    h.finish(new Error('close failed'));
    await settle();
    expect(h.exits).toEqual([1]);
  });

  it('treats a repeat within the grace period as the same request (terminal and npm both deliver Ctrl-C)', async () => {
    const h = harness();
    h.handle('SIGINT');
    h.advance(5);
    h.handle('SIGINT');
    h.advance(REPEAT_SIGNAL_GRACE_MS - 10);
    h.handle('SIGTERM');
    expect(h.stops()).toBe(1);
    expect(h.exits).toEqual([]);
    h.finish();
    await settle();
    expect(h.exits).toEqual([0]);
  });

  it('exits 1 at once on a second signal after the grace period', () => {
    const h = harness();
    h.handle('SIGINT');
    h.advance(REPEAT_SIGNAL_GRACE_MS);
    h.handle('SIGINT');
    expect(h.stops()).toBe(1);
    expect(h.exits).toEqual([1]);
  });
});
