/**
 * The buffer in front of a slow, failing or hung sink: retries keep order and lose nothing,
 * a hung sink never slows invoke, memory stays bounded, and close() keeps its deadline.
 */
import { describe, expect, it } from 'vitest';
import type { BufferOptions } from '../../../emit/buffer-options.ts';
import { PacketBuffer } from '../../../emit/buffer.ts';
import { createAuditEmitter, createMemoryTransport, DeliveryError, type PacketTransport, type TransportMessage } from '../../../emit/index.ts';

const identity = (s: string) => s;
const fast: BufferOptions = { lingerMs: 1, retryBaseMs: 1, retryMaxMs: 4 };

/** A sink that fails its first `failures` sends, then keeps what it gets. */
function flaky(failures: number, error: () => Error = () => new Error('broker unavailable')) {
  const got: TransportMessage[][] = [];
  let calls = 0;
  const transport: PacketTransport = {
    async send(batch) {
      calls++;
      if (calls <= failures) throw error();
      got.push(batch.slice());
    },
    close: async () => {},
  };
  return { transport, got, calls: () => calls };
}

/** A sink whose sends never settle. */
function hung() {
  let sends = 0;
  const transport: PacketTransport = {
    send: () => {
      sends++;
      return new Promise(() => {});
    },
    close: () => new Promise(() => {}),
  };
  return { transport, sends: () => sends };
}

const invariant = (s: { enqueued: number; delivered: number; rejected: number; dropped: number; buffered: number }) =>
  expect(s.delivered + s.rejected + s.dropped + s.buffered).toBe(s.enqueued);

describe('retries', () => {
  it('a sink that fails N times then succeeds gets everything, in order per key', async () => {
    const { transport, got, calls } = flaky(3);
    const buffer = new PacketBuffer(transport, identity, { ...fast, maxBatchPackets: 7 });
    const pushed: Array<[string, string]> = [];
    for (let i = 0; i < 50; i++) {
      const key = `task-${i % 4}`;
      pushed.push([key, `${key}#${i}`]);
      buffer.push(key, `${key}#${i}`);
    }
    expect(await buffer.flush(2000)).toBe(true);
    const delivered = got.flat();
    expect(delivered.map((m) => m.value)).toEqual(pushed.map(([, v]) => v));
    for (const key of ['task-0', 'task-1', 'task-2', 'task-3']) {
      expect(delivered.filter((m) => m.key === key).map((m) => m.value)).toEqual(pushed.filter(([k]) => k === key).map(([, v]) => v));
    }
    expect(calls()).toBe(3 + got.length);
    expect(buffer.stats()).toEqual({ enqueued: 50, delivered: 50, rejected: 0, dropped: 0, failedBatches: 3, buffered: 0 });
  });

  it('packets pushed during the retries are delivered after the failing batch', async () => {
    const { transport, got } = flaky(2);
    const buffer = new PacketBuffer(transport, identity, { ...fast, retryBaseMs: 20, retryMaxMs: 20 });
    buffer.push('k', 'first');
    await new Promise((r) => setTimeout(r, 15));
    buffer.push('k', 'second');
    expect(await buffer.flush(2000)).toBe(true);
    expect(got.flat().map((m) => m.value)).toEqual(['first', 'second']);
  });

  it('a non-retryable failure gives the batch up at once and the next batch still goes', async () => {
    const { transport, got } = flaky(1, () => new DeliveryError('413 payload too large', { retryable: false }));
    const buffer = new PacketBuffer(transport, identity, { ...fast, maxBatchPackets: 2 });
    for (const v of ['a', 'b', 'c']) buffer.push('k', v);
    expect(await buffer.flush(2000)).toBe(true);
    expect(got.flat().map((m) => m.value)).toEqual(['c']);
    expect(buffer.stats()).toMatchObject({ delivered: 1, dropped: 2, failedBatches: 1 });
  });

  it('maxAttempts bounds the retries of a batch', async () => {
    const { transport, calls } = flaky(Infinity);
    const buffer = new PacketBuffer(transport, identity, { ...fast, maxAttempts: 3 });
    buffer.push('k', 'a');
    expect(await buffer.flush(2000)).toBe(true);
    expect(calls()).toBe(3);
    expect(buffer.stats()).toMatchObject({ delivered: 0, dropped: 1, failedBatches: 3, buffered: 0 });
  });

  it('rejections reported by the sink are counted, not retried', async () => {
    let sends = 0;
    const transport: PacketTransport = {
      send: async () => {
        sends++;
        return { rejected: 1, reasons: ['schema'] };
      },
      close: async () => {},
    };
    const buffer = new PacketBuffer(transport, identity, fast);
    for (const v of ['a', 'b', 'c']) buffer.push('k', v);
    expect(await buffer.flush(2000)).toBe(true);
    expect(sends).toBe(1);
    expect(buffer.stats()).toMatchObject({ delivered: 2, rejected: 1, dropped: 0, failedBatches: 0 });
  });

  it('a packet that cannot be serialized costs only itself', async () => {
    const transport = createMemoryTransport();
    const encode = (s: string) => {
      if (s === 'bad') throw new Error('bug');
      return s;
    };
    const buffer = new PacketBuffer(transport, encode, fast);
    for (const v of ['a', 'bad', 'c']) buffer.push('k', v);
    expect(await buffer.flush(2000)).toBe(true);
    expect(transport.messages().map((m) => m.value)).toEqual(['a', 'c']);
    expect(buffer.stats()).toMatchObject({ delivered: 2, dropped: 1 });
  });
});

describe('batching', () => {
  it('splits by count and by bytes; a packet larger than maxBatchBytes goes alone', async () => {
    const transport = createMemoryTransport();
    const buffer = new PacketBuffer(transport, identity, { ...fast, maxBatchPackets: 4, maxBatchBytes: 100 });
    const values = ['x'.repeat(10), 'x'.repeat(10), 'y'.repeat(150), ...Array.from({ length: 9 }, (_, i) => `${i}`.repeat(30))];
    for (const v of values) buffer.push('k', v);
    expect(await buffer.flush(2000)).toBe(true);
    expect(transport.messages().map((m) => m.value)).toEqual(values);
    for (const b of transport.batches) {
      expect(b.length).toBeLessThanOrEqual(4);
      const bytes = b.reduce((n, m) => n + m.value.length + m.key.length, 0);
      if (b.length > 1) expect(bytes).toBeLessThanOrEqual(100);
    }
    expect(transport.batches.some((b) => b.length === 1 && b[0]?.value.startsWith('y'))).toBe(true);
  });

  it('waits lingerMs to batch, and a full batch goes without waiting', async () => {
    const transport = createMemoryTransport();
    const buffer = new PacketBuffer(transport, identity, { lingerMs: 60_000, maxBatchPackets: 3 });
    buffer.push('k', 'a');
    await new Promise((r) => setTimeout(r, 20));
    expect(transport.batches).toHaveLength(0);
    buffer.push('k', 'b');
    buffer.push('k', 'c');
    await new Promise((r) => setTimeout(r, 20));
    expect(transport.batches).toEqual([[{ key: 'k', value: 'a' }, { key: 'k', value: 'b' }, { key: 'k', value: 'c' }]]);
  });
});

describe('a hung or down sink', () => {
  it('invoke stays fast, the buffer stays bounded, drops are counted, close() keeps its deadline', async () => {
    const { transport, sends } = hung();
    const emitter = createAuditEmitter({ transport, orchestrator: 'gateway', agentId: 'L', buffer: { maxBuffered: 100, maxBatchPackets: 10, lingerMs: 1 } });
    const n = 2000;
    const started = performance.now();
    for (let i = 0; i < n; i++) await emitter.invoke('t', { i }, async () => 'ok', { taskId: 'task' });
    const perCallMs = (performance.now() - started) / n;
    expect(perCallMs).toBeLessThan(1);
    await new Promise((r) => setTimeout(r, 20));
    expect(sends()).toBe(1);
    const s = emitter.stats();
    expect(s.enqueued).toBe(2 * n);
    expect(s.buffered).toBeLessThanOrEqual(100);
    expect(s.dropped).toBeGreaterThanOrEqual(2 * n - 100);
    invariant(s);

    const closing = performance.now();
    await emitter.close(150);
    const took = performance.now() - closing;
    expect(took).toBeGreaterThanOrEqual(140);
    expect(took).toBeLessThan(1000);
    expect(emitter.stats()).toMatchObject({ enqueued: 2 * n, delivered: 0, dropped: 2 * n, buffered: 0 });
    // After close, calls still run; their packets are counted as dropped.
    await expect(emitter.invoke('t', {}, async () => 'still works')).resolves.toBe('still works');
    expect(emitter.stats().dropped).toBe(2 * n + 2);
  });

  it('drop-newest keeps the oldest packets, drop-oldest the newest', async () => {
    for (const overflow of ['drop-newest', 'drop-oldest'] as const) {
      let release: () => void = () => {};
      const got: string[] = [];
      const transport: PacketTransport = {
        async send(batch) {
          await new Promise<void>((r) => (release = r));
          got.push(...batch.map((m) => m.value));
        },
        close: async () => {},
      };
      const buffer = new PacketBuffer(transport, identity, { lingerMs: 1, maxBuffered: 5, maxBatchPackets: 2, overflow });
      buffer.push('k', 'p0');
      buffer.push('k', 'p1');
      await new Promise((r) => setTimeout(r, 10));
      for (let i = 2; i < 10; i++) buffer.push('k', `p${i}`);
      expect(buffer.stats()).toMatchObject({ buffered: 5, dropped: 5 });
      const flushed = buffer.flush(2000);
      for (let i = 0; i < 5; i++) {
        release();
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(await flushed).toBe(true);
      expect(got).toEqual(overflow === 'drop-newest' ? ['p0', 'p1', 'p2', 'p3', 'p4'] : ['p0', 'p1', 'p7', 'p8', 'p9']);
    }
  });

  it('a sink that keeps failing: flush and close end at their deadline and count what is left', async () => {
    const { transport } = flaky(Infinity);
    const buffer = new PacketBuffer(transport, identity, { ...fast, retryBaseMs: 5, retryMaxMs: 5 });
    for (let i = 0; i < 10; i++) buffer.push('k', `${i}`);
    expect(await buffer.flush(50)).toBe(false);
    expect(buffer.stats()).toMatchObject({ buffered: 10, dropped: 0 });
    await buffer.close(50);
    const s = buffer.stats();
    expect(s).toMatchObject({ delivered: 0, dropped: 10, buffered: 0 });
    expect(s.failedBatches).toBeGreaterThan(1);
  });
});

describe('close', () => {
  it('flushes everything still lingering, then closes the sink', async () => {
    const transport = createMemoryTransport();
    const emitter = createAuditEmitter({ transport, orchestrator: 'scheduler', agentId: 'L', buffer: { lingerMs: 60_000, maxBatchPackets: 1000 } });
    for (let i = 0; i < 25; i++) await emitter.invoke('t', { i }, async () => `r${i}`);
    expect(transport.batches).toHaveLength(0);
    await emitter.close();
    expect(transport.messages()).toHaveLength(50);
    expect(transport.closed).toBe(true);
    expect(emitter.stats()).toEqual({ enqueued: 50, delivered: 50, rejected: 0, dropped: 0, failedBatches: 0, buffered: 0 });
    await emitter.close();
  });
});
