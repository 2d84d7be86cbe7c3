/**
 * INGEST_FLUSH_MS is honoured: at a low rate the worker gathers records for up to flushMs before
 * writing, so packets produced one by one land in one insert (rows of one insert share their
 * ingested_at, ClickHouse's now64() of that insert), and none waits much longer than flushMs.
 */
import { describe, expect, it } from 'vitest';
import { rows } from '../../helpers/clickhouse.ts';
import { workerFixture } from '../../helpers/ingest-worker.ts';
import { eventually } from '../../helpers/kafka.ts';
import { toolCall } from '../../helpers/packets.ts';

const FLUSH_MS = 3000;

describe('ingest flush', () => {
  it('gathers packets produced one by one for up to INGEST_FLUSH_MS into one insert', async () => {
    const { kafka, names, ch, db, writer, worker: workerOf } = await workerFixture('flush');
    const worker = workerOf(writer, { flushMs: FLUSH_MS });
    const producer = kafka.producer();
    await producer.connect();
    await worker.start();
    try {
      // A first packet, so the consumer is fetching, then five 40 ms apart: at most one fetch ends inside those 200 ms.
      const send = (id: number) => producer.send({ topic: names.topic, messages: [{ key: 't', value: JSON.stringify(toolCall({}, `flush-${id}`)) }] });
      await send(0);
      await eventually(async () => (await rows(ch, 'SELECT 1 FROM {db:Identifier}.tool_invocations', { db })).length === 1, 30_000, 'the first packet');
      const sent: number[] = [];
      for (let i = 1; i <= 5; i++) {
        sent.push(Date.now());
        await send(i);
        await new Promise((r) => setTimeout(r, 40));
      }
      await eventually(async () => (await rows(ch, 'SELECT 1 FROM {db:Identifier}.tool_invocations', { db })).length === 6, 30_000, 'the five packets');
      const stamps = await rows<{ at: string; n: string }>(
        ch,
        "SELECT toUnixTimestamp64Milli(ingested_at) AS at, count() AS n FROM {db:Identifier}.tool_invocations WHERE task_id != 'flush-0' GROUP BY at ORDER BY at",
        { db },
      );
      expect(stamps.length, JSON.stringify(stamps)).toBeLessThanOrEqual(2);
      // None waited much longer than the flush interval (the first sent waits longest).
      expect(Number(stamps[stamps.length - 1]?.at) - (sent[0] as number)).toBeLessThan(FLUSH_MS + 2500);
    } finally {
      await worker.stop();
      await producer.disconnect();
    }
  }, 90_000);
});
