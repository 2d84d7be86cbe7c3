/**
 * What a Kafka ingest worker (kafka-worker.ts) is configured with, takes and offers.
 */
import type { Kafka } from 'kafkajs';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import type { SegmentWriter } from './segment-writer.ts';

/** Settings of createIngestWorker (kafka-worker.ts). */
export interface IngestWorkerConfig {
  topic: string;
  dlqTopic: string;
  groupId: string;
  batchMaxPackets: number;
  sinkRetryMaxMs: number;
  sinkUnhealthyAfterMs: number;
  partitionsConsumedConcurrently?: number;
  /**
   * kafkajs consumers in this process (one group; partitions spread over them). kafkajs fetches
   * again only when every batch of its last fetch is handled, so with one consumer decoding and
   * ClickHouse take turns; with two, one consumer decodes while the other's rows are written.
   */
  consumers?: number;
  /** Packets handed to the writer whose offsets are not committed yet, at most; default 100,000. */
  maxInFlightPackets?: number;
  /** A dead member holds its partitions this long; lower means faster take-over after a crash. */
  sessionTimeoutMs?: number;
  /**
   * Longest a fetch waits for more records (up to {@link FLUSH_MIN_BYTES}) before what it got is
   * written (INGEST_FLUSH_MS; default 200): at a low rate, fewer and larger inserts (ClickHouse
   * makes a part per insert) for at most this much latency; under load a fetch fills at once.
   */
  flushMs?: number;
  /** Failures of one chunk before its packets are parked in the DLQ and the partition moves on (chunk-parking.ts); default 5. */
  chunkMaxAttempts?: number;
}

/** What a fetch waits to gather, at most flushMs: about a thousand typical packets. */
export const FLUSH_MIN_BYTES = 1024 * 1024;

/** A running (or stopped) ingest worker. */
export interface IngestWorker {
  start(): Promise<void>;
  /** Finishes the chunk in hand, commits it, leaves the group. */
  stop(): Promise<void>;
  /** Unhealthy when ClickHouse has refused writes for longer than sinkUnhealthyAfterMs. */
  health(): { ok: boolean; detail?: string };
}

/** Dependencies of createIngestWorker (kafka-worker.ts). */
export interface IngestWorkerDeps {
  kafka: Kafka;
  writer: SegmentWriter;
  config: IngestWorkerConfig;
  logger: Logger;
  metrics: MetricsRegistry;
}
