import { describe, expect, it } from 'vitest';
import { StatementGate, type Lane } from '../../../platform/clickhouse/gate.ts';

/** A statement that ends when the test says so. */
function held(gate: StatementGate, lane: Lane, order: string[], name: string) {
  let end!: () => void;
  const ended = new Promise<void>((r) => (end = r));
  const done = gate.run(lane, async () => {
    order.push(name);
    await ended;
  });
  return { end, done };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('the statement gate', () => {
  it('runs one statement at a time and lets reads, then ingest, then jobs go, FIFO within a lane', async () => {
    const gate = new StatementGate(1, 60_000);
    const order: string[] = [];
    const first = held(gate, 'job', order, 'job-1');
    const rest = [held(gate, 'job', order, 'job-2'), held(gate, 'ingest', order, 'ingest-1'), held(gate, 'read', order, 'read-1'), held(gate, 'read', order, 'read-2'), held(gate, 'job', order, 'job-3')];
    await tick();
    expect(order).toEqual(['job-1']);
    expect(gate.state()).toEqual({ running: 1, waiting: { read: 2, ingest: 1, job: 2 } });
    first.end();
    for (const s of rest) {
      await tick();
      s.end();
    }
    await Promise.all(rest.map((s) => s.done));
    expect(order).toEqual(['job-1', 'read-1', 'read-2', 'ingest-1', 'job-2', 'job-3']);
    expect(gate.state()).toEqual({ running: 0, waiting: { read: 0, ingest: 0, job: 0 } });
  });

  it('lets a statement that waited past the aging bound go before fresher, more urgent ones', async () => {
    let t = 0;
    const gate = new StatementGate(1, 1_000, () => t);
    const order: string[] = [];
    const first = held(gate, 'read', order, 'read-1');
    const job = held(gate, 'job', order, 'job-1');
    t = 1_500;
    const read = held(gate, 'read', order, 'read-2');
    await tick();
    first.end();
    await tick();
    job.end();
    await tick();
    read.end();
    await Promise.all([job.done, read.done]);
    expect(order).toEqual(['read-1', 'job-1', 'read-2']);
  });

  it('gives the slot back when a statement fails', async () => {
    const gate = new StatementGate(1, 60_000);
    await expect(gate.run('job', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(gate.run('read', () => Promise.resolve(7))).resolves.toBe(7);
    expect(gate.state().running).toBe(0);
  });

  it('runs up to its slots at once', async () => {
    const gate = new StatementGate(2, 60_000);
    const order: string[] = [];
    const a = held(gate, 'job', order, 'a');
    const b = held(gate, 'job', order, 'b');
    const c = held(gate, 'read', order, 'c');
    await tick();
    expect(order).toEqual(['a', 'b']);
    a.end();
    await tick();
    expect(order).toEqual(['a', 'b', 'c']);
    b.end();
    c.end();
    await Promise.all([a.done, b.done, c.done]);
  });

  it('gives a waiting lane every fourth turn of the lanes above it, so a stream of reads does not stop jobs', async () => {
    const gate = new StatementGate(1, 60_000);
    const order: string[] = [];
    const first = held(gate, 'read', order, 'r0');
    const queued = [
      ...Array.from({ length: 8 }, (_, i) => held(gate, 'read', order, `r${i + 1}`)),
      held(gate, 'job', order, 'j1'),
      held(gate, 'job', order, 'j2'),
    ];
    await tick();
    first.end();
    for (let i = 0; i < queued.length; i++) {
      await tick();
      for (const q of queued) q.end();
    }
    await Promise.all(queued.map((q) => q.done));
    // Reads keep three turns in four while jobs wait; a read waits for at most one job statement.
    expect(order).toEqual(['r0', 'r1', 'r2', 'r3', 'j1', 'r4', 'r5', 'r6', 'j2', 'r7', 'r8']);
  });
});

