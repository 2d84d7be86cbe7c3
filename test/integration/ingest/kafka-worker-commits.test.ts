/**
 * The ingest worker commits offsets while later batches are already being written: an offset
 * must never move past a chunk that was not made durable, even when later chunks of the same
 * partition succeed, and the failed chunk must come back without new messages arriving.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../platform/errors.ts';
import { createIngestWorker } from '../../../ingest/kafka-worker.ts';
import type { RawPacket } from '../../../ingest/rows.ts';
import { createSegmentWriter, type SegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { count, freshDatabase, doorOf } from '../../helpers/clickhouse.ts';
import { createTopics, eventually, groupLag, produceAll, testKafka, uniqueNames } from '../../helpers/kafka.ts';
import { mixedStream } from '../../helpers/workload.ts';

describe('ingest worker offsets', () => {
  it('does not commit past a chunk whose write failed, and writes it again', async () => {
    const kafka = testKafka('commits');
    const names = uniqueNames('commits');
    await createTopics(kafka, [
      { topic: names.topic, partitions: 1 },
      { topic: names.dlqTopic, partitions: 1 },
    ]);
    const { ch, db } = await freshDatabase('commits');
    const metrics = new MetricsRegistry();
    const real = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics, logger: silentLogger() });
    // A bug, not a ClickHouse fault: the chunk holding offset 1000 fails once, without retry;
    // the chunks after it are written fine.
    let failed = 0;
    const writer: SegmentWriter = {
      write(batch: RawPacket[]) {
        if (failed === 0 && batch.some((p) => p.source.kind === 'kafka' && p.source.offset === '1000')) {
          failed++;
          return Promise.reject(new AppError('INTERNAL', 'simulated failure of one chunk', { retryable: false }));
        }
        return real.write(batch);
      },
    };
    const msgs = mixedStream(3000, { invalidEvery: 1_000_000, outputEvery: 1_000_000 });
    await produceAll(kafka, names.topic, msgs, 500);
    const worker = createIngestWorker({
      kafka,
      writer,
      logger: silentLogger(),
      metrics,
      config: { ...names, batchMaxPackets: 500, sinkRetryMaxMs: 200, sinkUnhealthyAfterMs: 60_000, sessionTimeoutMs: 6000, consumers: 1 },
    });
    const admin = kafka.admin();
    await admin.connect();
    await worker.start();
    // No new messages arrive: the failed chunk must come back by itself.
    await eventually(async () => (await groupLag(admin, names.groupId, names.topic)) === 0, 90_000, 'the group to catch up');
    await worker.stop();
    await admin.disconnect();
    expect(failed).toBe(1);
    expect(await count(ch, db, 'tool_invocations')).toBe(3000);
  }, 120_000);
});
