/**
 * INGEST_FLUSH_MS is honoured: at a low rate the worker gathers records for up to flushMs before
 * writing, so packets produced one by one land in one insert (rows of one insert share their
 * ingested_at, ClickHouse's now64() of that insert), and none waits much longer than flushMs.
 */
import { describe, expect, it } from 'vitest';
import { createIngestWorker } from '../../../ingest/kafka-worker.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { doorOf, freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { createTopics, eventually, testKafka, uniqueNames } from '../../helpers/kafka.ts';
import { toolCall } from '../../helpers/packets.ts';

const FLUSH_MS = 3000;

describe('ingest flush', () => {
  it('gathers packets produced one by one for up to INGEST_FLUSH_MS into one insert', async () => {
    const kafka = testKafka('flush');
    const names = uniqueNames('flush');
    await createTopics(kafka, [
      { topic: names.topic, partitions: 1 },
      { topic: names.dlqTopic, partitions: 1 },
    ]);
    const { ch, db } = await freshDatabase('flush');
    const metrics = new MetricsRegistry();
    const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics, logger: silentLogger() });
    const worker = createIngestWorker({
      kafka,
      writer,
      logger: silentLogger(),
      metrics,
      config: { ...names, batchMaxPackets: 500, sinkRetryMaxMs: 200, sinkUnhealthyAfterMs: 60_000, sessionTimeoutMs: 6000, consumers: 1, flushMs: FLUSH_MS },
    });
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
