/**
 * The lanes' close() waits for every statement and ping still in flight before it closes a client
 * (platform/clickhouse/lanes.ts): a client closed under a running statement leaves the embedded
 * engine held past close(), and a process exiting then crashed. Clients here are stand-ins that
 * record the order of events; the real engine's side is test/integration/platform/door-close.test.ts.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { describe, expect, it } from 'vitest';
import { laneConnections } from '../../../platform/clickhouse/lanes.ts';

/** A client whose ping answers when `answer` is called, and which records when it was closed. */
function standIn(events: string[], name: string): { client: ClickHouseClient; answer: () => void } {
  let answer = () => {};
  const client = {
    ping: () => new Promise<{ success: true }>((resolve) => (answer = () => (events.push(`${name} answered`), resolve({ success: true })))),
    close: async () => void events.push(`${name} closed`),
  } as unknown as ClickHouseClient;
  return { client, answer: () => answer() };
}

describe('lane connections', () => {
  it('close waits for statements and pings in flight, then closes every client', async () => {
    const events: string[] = [];
    const read = standIn(events, 'read');
    const job = standIn(events, 'job');
    const conns = laneConnections({ read: [read.client], ingest: [job.client], job: [job.client] }, 2_000);
    let finish = () => {};
    const statement = conns.run('job', () => new Promise<void>((resolve) => (finish = () => (events.push('statement answered'), resolve()))));
    const ping = conns.ping();
    const closed = conns.close().then(() => events.push('close returned'));
    await new Promise((r) => setTimeout(r, 20));
    expect(events).toEqual([]);
    finish();
    await statement;
    await new Promise((r) => setTimeout(r, 20));
    expect(events).toEqual(['statement answered']);
    read.answer();
    await Promise.all([ping, closed]);
    expect(events).toEqual(['statement answered', 'read answered', 'read closed', 'job closed', 'close returned']);
  });
});

/** A stand-in for an embedded connection (it has chDB's raw insert, so the lanes give it a gate). */
function embeddedStandIn(): ClickHouseClient {
  return { connection: { chdb: { rawInsert: async () => undefined } }, close: async () => undefined } as unknown as ClickHouseClient;
}

describe('a lane of several embedded connections', () => {
  it('gives a statement the first connection that is free, not the one least busy when it was sent', async () => {
    const [a, b] = [embeddedStandIn(), embeddedStandIn()];
    const conns = laneConnections({ read: [embeddedStandIn()], ingest: [a, b], job: [embeddedStandIn()] }, 2_000);
    const ran: string[] = [];
    const statement = (name: string) => {
      let finish = () => {};
      const done = conns.run('ingest', (c) => {
        ran.push(`${name} on ${c.ch === a ? 'a' : 'b'}`);
        return new Promise<void>((resolve) => (finish = resolve));
      });
      return { done, finish: () => finish() };
    };
    const long = statement('long');
    const short = statement('short');
    const third = statement('third');
    await new Promise((r) => setTimeout(r, 10));
    expect(ran).toEqual(['long on a', 'short on b']);
    short.finish();
    await short.done;
    await new Promise((r) => setTimeout(r, 10));
    // Bound when sent, the third statement waited behind the long one on a.
    expect(ran).toEqual(['long on a', 'short on b', 'third on b']);
    third.finish();
    long.finish();
    await Promise.all([third.done, long.done, conns.close()]);
  });
});
