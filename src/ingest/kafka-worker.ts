/**
 * `tool-audit ingest`: a kafkajs consumer-group member that runs the segment writer on
 * tool_audit.packets. Offsets are committed only after a chunk's rows and quarantine records
 * are in ClickHouse; redelivered packets are recognised by key (see segment-lookups.ts), so a
 * crash or rebalance at any point never makes a second visible row.
 */
import type { Consumer, EachBatchPayload, IHeaders, Kafka, Producer } from 'kafkajs';
import { errorMessage, isRetryable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { MetricsRegistry } from '../metrics.ts';
import type { RawPacket } from './rows.ts';
import type { PacketOutcome, SegmentWriter } from './segment-writer.ts';

/** Settings of {@link createIngestWorker}. */
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
  /** A dead member holds its partitions this long; lower means faster take-over after a crash. */
  sessionTimeoutMs?: number;
}

/** A running (or stopped) ingest worker. */
export interface IngestWorker {
  start(): Promise<void>;
  /** Finishes the chunk in hand, commits it, leaves the group. */
  stop(): Promise<void>;
  /** Unhealthy when ClickHouse has refused writes for longer than sinkUnhealthyAfterMs. */
  health(): { ok: boolean; detail?: string };
}

const POISON = new Set(['oversized', 'malformed_json', 'schema']);

/** Creates a worker; nothing connects before start(). */
export function createIngestWorker(deps: {
  kafka: Kafka;
  writer: SegmentWriter;
  config: IngestWorkerConfig;
  logger: Logger;
  metrics: MetricsRegistry;
}): IngestWorker {
  const { kafka, writer, config, logger, metrics } = deps;
  const consumers: Consumer[] = Array.from({ length: Math.max(1, config.consumers ?? 2) }, () =>
    kafka.consumer({
      groupId: config.groupId,
      sessionTimeout: config.sessionTimeoutMs ?? 30_000,
      rebalanceTimeout: 60_000,
      heartbeatInterval: Math.min(3_000, Math.floor((config.sessionTimeoutMs ?? 30_000) / 3)),
      maxBytesPerPartition: 8 * 1024 * 1024,
      maxBytes: 32 * 1024 * 1024,
      maxWaitTimeInMs: 250,
      allowAutoTopicCreation: false,
    }),
  );
  const dlq: Producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: false });
  let stopping = false;
  let failingSince: number | undefined;
  let lastError = '';

  async function writeUntilDone(packets: RawPacket[], p: EachBatchPayload): Promise<PacketOutcome[] | undefined> {
    let delay = 100;
    for (;;) {
      try {
        const out = await writer.write(packets);
        if (failingSince !== undefined) logger.info({ downForMs: Date.now() - failingSince }, 'ClickHouse writes recovered');
        failingSince = undefined;
        return out;
      } catch (err) {
        if (!isRetryable(err)) throw err;
        failingSince ??= Date.now();
        lastError = errorMessage(err);
        metrics.inc('tool_audit_ingest_write_retries_total', 'Failed segment writes that will be retried');
        logger.warn({ err: lastError, retryInMs: delay }, 'segment write failed; offsets held, retrying');
        await sleep(delay);
        delay = Math.min(delay * 2, config.sinkRetryMaxMs);
        // Nothing was committed: on stop or a lost assignment, the next owner starts from here.
        if (stopping || !p.isRunning() || p.isStale()) return undefined;
        await p.heartbeat().catch(() => undefined);
      }
    }
  }

  const eachBatchOf = (consumer: Consumer) => (p: EachBatchPayload) => eachBatch(consumer, p);

  async function eachBatch(consumer: Consumer, p: EachBatchPayload): Promise<void> {
    const { batch } = p;
    metrics.set('tool_audit_ingest_partition_lag', 'Messages behind the partition high watermark', Number(batch.offsetLag()), {
      partition: String(batch.partition),
    });
    if (stopping || !p.isRunning() || p.isStale()) return;
    // Every chunk of the batch goes to the writer at once: later chunks are decoded while
    // earlier ones are written, and the writer commits them in order (often in one round).
    // Offsets are still committed chunk by chunk, each only once its rows are durable.
    const chunks: Array<{ last: string; packets: RawPacket[]; written: Promise<PacketOutcome[] | undefined> }> = [];
    for (let i = 0; i < batch.messages.length; i += config.batchMaxPackets) {
      const chunk = batch.messages.slice(i, i + config.batchMaxPackets);
      const packets: RawPacket[] = chunk.map((m) => ({
        raw: m.value ? m.value.toString('utf8') : '',
        // The HTTP edge forwards an oversized packet truncated, with its real size in a header.
        bytes: Math.max(m.value?.length ?? 0, Number(header(m.headers, 'x-original-bytes') ?? 0)),
        source: { kind: 'kafka', topic: batch.topic, partition: batch.partition, offset: m.offset },
        requestId: header(m.headers, 'x-request-id'),
      }));
      chunks.push({ last: (chunk[chunk.length - 1] as { offset: string }).offset, packets, written: writeUntilDone(packets, p) });
    }
    // Heartbeats keep the membership alive through long inserts.
    const beat = setInterval(() => void p.heartbeat().catch(() => undefined), 2_000);
    try {
      for (const { last, packets, written } of chunks) {
        const outcomes = await written;
        // Stopped or lost the partition: nothing more is committed; the next owner resumes here.
        if (!outcomes || stopping || !p.isRunning() || p.isStale()) return;
        await sendToDlq(packets, outcomes);
        p.resolveOffset(last);
        await consumer
          .commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() }])
          .catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'offset commit failed; the chunk may be redelivered and deduplicated'));
        metrics.inc('tool_audit_ingest_kafka_messages_total', 'Kafka messages ingested and committed', {}, packets.length);
      }
    } finally {
      clearInterval(beat);
      // Chunks abandoned above still settle (their rows are harmless, found again by key).
      for (const c of chunks) void c.written.catch(() => undefined);
    }
  }

  async function sendToDlq(packets: RawPacket[], outcomes: PacketOutcome[]): Promise<void> {
    const messages = outcomes.flatMap((o, i) => {
      const p = packets[i] as RawPacket;
      if (o.status !== 'rejected' || !POISON.has(o.reason?.code ?? '') || p.source.kind !== 'kafka') return [];
      const s = p.source;
      return [{ value: p.raw, headers: { 'x-reason': o.reason?.code ?? '', 'x-source': `${s.topic}/${s.partition}@${s.offset}` } }];
    });
    if (messages.length === 0) return;
    // The quarantine row is the durable record; the DLQ is a convenience for stream consumers.
    await dlq.send({ topic: config.dlqTopic, acks: -1, messages }).catch((err: unknown) => {
      metrics.inc('tool_audit_dlq_failures_total', 'Poison packets quarantined but not copied to the DLQ', {}, messages.length);
      logger.warn({ err: errorMessage(err) }, 'DLQ produce failed; packets are in quarantine');
    });
  }

  return {
    async start() {
      await dlq.connect();
      await Promise.all(
        consumers.map(async (consumer) => {
          await consumer.connect();
          await consumer.subscribe({ topic: config.topic, fromBeginning: true });
          await consumer.run({
            autoCommit: false,
            eachBatchAutoResolve: false,
            partitionsConsumedConcurrently: config.partitionsConsumedConcurrently ?? 3,
            eachBatch: eachBatchOf(consumer),
          });
        }),
      );
    },
    async stop() {
      stopping = true;
      await Promise.all(consumers.map((c) => c.disconnect()));
      await dlq.disconnect();
    },
    health() {
      if (failingSince !== undefined && Date.now() - failingSince > config.sinkUnhealthyAfterMs) {
        return { ok: false, detail: `ClickHouse writes failing for ${Math.round((Date.now() - failingSince) / 1000)} s: ${lastError}` };
      }
      return { ok: true };
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function header(headers: IHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  const first = Array.isArray(v) ? v[0] : v;
  return first === undefined ? undefined : first.toString();
}
