/**
 * Wiring shared by `serve` and `ingest`: the segment writer, and the Kafka ingest worker with
 * its topics.
 */
import { join } from 'node:path';
import type { Kafka } from 'kafkajs';
import { createIngestWorker } from '../ingest/kafka-worker.ts';
import type { IngestWorker } from '../ingest/kafka-worker-config.ts';
import { createSegmentWriter, type SegmentWriter } from '../ingest/segment-writer.ts';
import type { Config } from '../platform/config.ts';
import type { CallsStoredListener } from '../ingest/ports.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import type { Runtime } from './runtime.ts';

/** The segment writer of a runtime. */
export function createWriter(rt: Runtime, metrics: MetricsRegistry, onCallsStored?: CallsStoredListener): SegmentWriter {
  return createSegmentWriter({
    ...(onCallsStored ? { onCallsStored } : {}),
    clickhouse: rt.clickhouse,
    maxPacketBytes: rt.config.ingest.maxPacketBytes,
    dedupCacheEntries: rt.config.ingest.dedupCacheEntries,
    decodeThreads: rt.config.ingest.decodeThreads,
    ...(rt.redaction ? { redaction: rt.redaction } : {}),
    keyFilterMaxBytes: rt.config.ingest.keyFilterMb * 1024 * 1024,
    ...(rt.config.ingest.keySnapshotDir
      ? { keySnapshot: { path: join(rt.config.ingest.keySnapshotDir, `key-filter-${rt.config.clickhouse.database}.bin`), everyMs: rt.config.ingest.keySnapshotEveryMs } }
      : {}),
    metrics,
    logger: rt.logger,
  });
}

/** The packet topic and its dead-letter topic. */
export function kafkaTopics(config: Config): Array<{ topic: string; partitions: number }> {
  return [
    { topic: config.kafka.topic, partitions: config.kafka.partitions },
    { topic: config.kafka.dlqTopic, partitions: 1 },
  ];
}

/** Starts a consumer-group worker on the packet topic (topics must exist). */
export async function startKafkaWorker(rt: Runtime, kafka: Kafka, writer: SegmentWriter, metrics: MetricsRegistry): Promise<IngestWorker> {
  const k = rt.config.kafka;
  const worker = createIngestWorker({
    kafka,
    writer,
    logger: rt.logger,
    metrics,
    config: {
      topic: k.topic,
      dlqTopic: k.dlqTopic,
      groupId: k.groupId,
      batchMaxPackets: rt.config.ingest.batchMaxPackets,
      sinkRetryMaxMs: rt.config.ingest.sinkRetryMaxMs,
      sinkUnhealthyAfterMs: rt.config.ingest.sinkUnhealthyAfterMs,
      partitionsConsumedConcurrently: rt.config.ingest.partitionsConcurrency,
      consumers: rt.config.ingest.consumers,
      sessionTimeoutMs: k.sessionTimeoutMs,
      flushMs: rt.config.ingest.flushMs,
      chunkMaxAttempts: rt.config.ingest.chunkMaxAttempts,
    },
  });
  await worker.start();
  return worker;
}

/** Reachability of the Kafka cluster, for readiness. */
export async function pingKafka(kafka: Kafka): Promise<{ ok: boolean; detail?: string }> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.describeCluster();
    return { ok: true };
  } catch (err) {
    return { ok: false, detail: (err as Error).message };
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
