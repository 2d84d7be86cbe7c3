/**
 * A Kafka ingest worker over a fresh topic pair (1 partition each) and a fresh database, with the
 * real segment writer: the set-up the worker tests share. `worker(writer, config)` builds one with
 * the tests' defaults (chunks of 500, one consumer, short session) and the given writer (the real
 * one, or one that fails on purpose around it).
 */
import { createIngestWorker } from '../../ingest/kafka-worker.ts';
import type { IngestWorker, IngestWorkerConfig } from '../../ingest/kafka-worker-config.ts';
import { createSegmentWriter, type SegmentWriter } from '../../ingest/segment-writer.ts';
import { silentLogger } from '../../platform/logger.ts';
import { MetricsRegistry } from '../../platform/metrics.ts';
import { doorOf, freshDatabase } from './clickhouse.ts';
import { createTopics, testKafka, uniqueNames } from './kafka.ts';

/** The fixture of one worker test. */
export async function workerFixture(prefix: string) {
  const kafka = testKafka(prefix);
  const names = uniqueNames(prefix);
  await createTopics(kafka, [
    { topic: names.topic, partitions: 1 },
    { topic: names.dlqTopic, partitions: 1 },
  ]);
  const { ch, db } = await freshDatabase(prefix);
  const metrics = new MetricsRegistry();
  const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics, logger: silentLogger() });
  const worker = (w: SegmentWriter, config: Partial<IngestWorkerConfig> = {}): IngestWorker =>
    createIngestWorker({
      kafka,
      writer: w,
      logger: silentLogger(),
      metrics,
      config: { ...names, batchMaxPackets: 500, sinkRetryMaxMs: 200, sinkUnhealthyAfterMs: 60_000, sessionTimeoutMs: 6000, consumers: 1, ...config },
    });
  return { kafka, names, ch, db, metrics, writer, worker };
}
