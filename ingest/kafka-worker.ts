/**
 * `tool-audit ingest`: a kafkajs consumer-group member that runs the segment writer on
 * tool_audit.packets. Offsets are committed only after a chunk's rows and quarantine records
 * are in ClickHouse; redelivered packets are recognised by key (see segment-lookups.ts), so a
 * crash or rebalance at any point never makes a second visible row.
 */
import type { Consumer, EachBatchPayload, Producer } from 'kafkajs';
import { errorMessage } from '../platform/errors.ts';
import { ChunkFailures, DEFAULT_CHUNK_MAX_ATTEMPTS, parkedMessages } from './chunk-parking.ts';
import { dlqMessages, packetsOf } from './kafka-records.ts';
import type { PacketOutcome, RawPacket } from './ports.ts';
import { createSinkRetry, type SinkRetry } from './sink-retry.ts';
import { FLUSH_MIN_BYTES, type IngestWorker, type IngestWorkerDeps } from './kafka-worker-config.ts';

/**
 * What the write and commit steps need of a batch. Not the kafkajs payload: its functions keep
 * the whole batch (every message object) alive until the last chunk is committed. A partition
 * counts as lost once its consumer has rejoined the group since the batch was fetched.
 */
interface Partition {
  topic: string;
  partition: number;
  key: string;
  epoch: string;
  isRunning: () => boolean;
  isStale: () => boolean;
}

/** A slice of a batch handed to the writer, committed in order once written. */
interface Chunk {
  first: string;
  last: string;
  packets: RawPacket[];
  written: Promise<PacketOutcome[] | undefined>;
}

/** Creates a worker; nothing connects before start(). */
export function createIngestWorker(deps: IngestWorkerDeps): IngestWorker {
  return new KafkaIngestWorker(deps);
}

class KafkaIngestWorker implements IngestWorker {
  private readonly consumers: Consumer[];
  private readonly dlq: Producer;
  private readonly sink: SinkRetry;
  private readonly failures: ChunkFailures;
  private stopping = false;
  private readonly generations = new Map<Consumer, number>();
  private readonly running = new Map<Consumer, boolean>();
  /** Seeks per partition: a seek starts a new epoch (batches fetched before it are stale). */
  private readonly seeks = new Map<string, number>();
  /**
   * Partition → epoch (consumer and group generation) in which one of its chunks could not be
   * committed. Later chunks of that epoch must not be committed either: their offset would
   * cover the missing one. After a rejoin kafkajs fetches again from the committed offset.
   */
  private readonly blocked = new Map<string, string>();
  /**
   * Offsets follow durability without holding up fetching: a batch is handed to the writer and
   * its fetch position moves on at once, while a chain per partition awaits the chunks in order
   * and commits each chunk's offset only once its rows and quarantine records are durable.
   * (kafkajs fetches again only when every batch of its last fetch is handled, so waiting for
   * ClickHouse here would leave decoding idle while rows are written, and vice versa.)
   */
  private readonly chains = new Map<string, Promise<void>>();
  private inFlight = 0;
  private readonly maxInFlight: number;
  private readonly settled: Array<() => void> = [];

  constructor(private readonly deps: IngestWorkerDeps) {
    const { kafka, config } = deps;
    const session = config.sessionTimeoutMs ?? 30_000;
    this.consumers = Array.from({ length: Math.max(1, config.consumers ?? 2) }, () =>
      kafka.consumer({
        groupId: config.groupId,
        sessionTimeout: session,
        rebalanceTimeout: 60_000,
        heartbeatInterval: Math.min(3_000, Math.floor(session / 3)),
        maxBytesPerPartition: 8 * 1024 * 1024,
        maxBytes: 32 * 1024 * 1024,
        minBytes: FLUSH_MIN_BYTES,
        maxWaitTimeInMs: config.flushMs ?? 200,
        allowAutoTopicCreation: false,
      }),
    );
    this.dlq = kafka.producer({ allowAutoTopicCreation: false, idempotent: false });
    this.sink = createSinkRetry({ ...deps, retryMaxMs: config.sinkRetryMaxMs, unhealthyAfterMs: config.sinkUnhealthyAfterMs });
    this.maxInFlight = config.maxInFlightPackets ?? 100_000;
    this.failures = new ChunkFailures(config.chunkMaxAttempts ?? DEFAULT_CHUNK_MAX_ATTEMPTS);
  }

  private epochOf(consumer: Consumer, key: string): string {
    return `${this.consumers.indexOf(consumer)}:${this.generations.get(consumer) ?? 0}:${this.seeks.get(key) ?? 0}`;
  }

  private wakeWaiters(): void {
    for (const w of this.settled.splice(0)) w();
  }

  /** Waits while the writer is behind; heartbeats keep the membership meanwhile. */
  private async backPressure(p: EachBatchPayload): Promise<void> {
    if (this.inFlight < this.maxInFlight) return;
    const beat = setInterval(() => void p.heartbeat().catch(() => undefined), 2_000);
    try {
      while (this.inFlight >= this.maxInFlight && !this.stopping) await new Promise<void>((resolve) => this.settled.push(resolve));
    } finally {
      clearInterval(beat);
    }
  }

  private async eachBatch(consumer: Consumer, p: EachBatchPayload): Promise<void> {
    const { batch } = p;
    this.deps.metrics.set('tool_audit_ingest_partition_lag', 'Messages behind the partition high watermark', Number(batch.offsetLag()), {
      partition: String(batch.partition),
    });
    if (this.stopping || !p.isRunning() || p.isStale() || batch.isEmpty()) return;
    await this.backPressure(p);
    if (this.stopping || !p.isRunning() || p.isStale()) return;
    // Every chunk goes to the writer now: they are decoded while earlier rounds are written.
    const key = `${batch.topic}/${batch.partition}`;
    const epoch = this.epochOf(consumer, key);
    const part: Partition = {
      topic: batch.topic,
      partition: batch.partition,
      key,
      epoch,
      isRunning: () => this.running.get(consumer) === true,
      isStale: () => this.epochOf(consumer, key) !== epoch,
    };
    const chunks: Chunk[] = [];
    const size = this.deps.config.batchMaxPackets;
    for (let i = 0; i < batch.messages.length; i += size) {
      const records = batch.messages.slice(i, i + size);
      const packets = packetsOf(batch.topic, batch.partition, records);
      const written = this.sink.write(packets, () => this.stopping || !part.isRunning() || part.isStale());
      // Awaited in order below; a failure must not count as unhandled meanwhile.
      written.catch(() => undefined);
      chunks.push({ first: (records[0] as { offset: string }).offset, last: (records[records.length - 1] as { offset: string }).offset, packets, written });
      this.inFlight += packets.length;
    }
    p.resolveOffset(batch.lastOffset());
    const tail = (this.chains.get(key) ?? Promise.resolve()).then(() => this.commitInOrder(consumer, part, chunks));
    const settledTail = tail.catch((err: unknown) => this.deps.logger.error({ err: errorMessage(err) }, 'ingest chain failed'));
    this.chains.set(key, settledTail);
    void settledTail.then(() => {
      if (this.chains.get(key) === settledTail) this.chains.delete(key);
    });
  }

  /** The outcomes of a chunk, or undefined when it must not be committed in this epoch. */
  private async outcomesOf(consumer: Consumer, p: Partition, c: Chunk): Promise<PacketOutcome[] | undefined> {
    let outcomes: PacketOutcome[] | undefined;
    if (this.blocked.get(p.key) !== p.epoch) {
      try {
        outcomes = await c.written;
        this.failures.settled(p.key, c.first);
      } catch (err) {
        // A failure the sink does not retry (a bug, or ClickHouse refusing for good, e.g. a missing
        // grant): fetch the partition again from this chunk, after a pause; the seek starts a new
        // epoch, and what is still in flight from this one is not committed. After
        // chunkMaxAttempts failures of the chunk, park it in the DLQ instead and move on.
        if (this.failures.failed(p.key, c.first) && !p.isStale() && (await this.park(p, c, err))) return [];
        this.deps.logger.error({ err: errorMessage(err), topic: p.topic, partition: p.partition, offset: c.first }, 'ingest of a chunk failed; fetching it again');
        this.deps.metrics.inc('tool_audit_ingest_chunk_failures_total', 'Chunks that failed for another reason than ClickHouse and were fetched again');
        this.blocked.set(p.key, p.epoch);
        if (!this.stopping && !p.isStale()) this.refetch(consumer, p, c.first);
      }
    }
    // Given up (stopped while ClickHouse refused writes), the partition moved, or an earlier
    // chunk was not committed: nothing more is committed for it in this epoch; its next owner
    // resumes from the last committed offset and the writer recognises what is stored.
    if (!outcomes || p.isStale() || this.blocked.get(p.key) === p.epoch) {
      this.blocked.set(p.key, p.epoch);
      void c.written.catch(() => undefined);
      return undefined;
    }
    return outcomes;
  }

  private async commitInOrder(consumer: Consumer, p: Partition, chunks: Chunk[]): Promise<void> {
    for (const c of chunks) {
      try {
        const outcomes = await this.outcomesOf(consumer, p, c);
        if (!outcomes) continue;
        await this.sendToDlq(c.packets, outcomes);
        await consumer
          .commitOffsets([{ topic: p.topic, partition: p.partition, offset: (BigInt(c.last) + 1n).toString() }])
          .catch((err: unknown) => this.deps.logger.warn({ err: errorMessage(err) }, 'offset commit failed; the chunk may be redelivered and deduplicated'));
        this.deps.metrics.inc('tool_audit_ingest_kafka_messages_total', 'Kafka messages ingested and committed', {}, c.packets.length);
      } finally {
        this.inFlight -= c.packets.length;
        this.wakeWaiters();
      }
    }
  }

  /** Seeks a partition back to offset, paused for a second so that a persistent failure does not spin. */
  private refetch(consumer: Consumer, p: Partition, offset: string): void {
    this.seeks.set(p.key, (this.seeks.get(p.key) ?? 0) + 1);
    const tp = [{ topic: p.topic, partitions: [p.partition] }];
    try {
      consumer.pause(tp);
      consumer.seek({ topic: p.topic, partition: p.partition, offset });
    } catch (err) {
      this.deps.logger.warn({ err: errorMessage(err) }, 'seek failed; the partition is fetched again after the next rebalance');
    }
    setTimeout(() => {
      if (!this.stopping) consumer.resume(tp);
    }, 1_000).unref();
  }

  /** Sends a chunk that keeps failing to the DLQ; true once Kafka has every packet of it. */
  private async park(p: Partition, c: Chunk, err: unknown): Promise<boolean> {
    const error = errorMessage(err);
    const where = { topic: p.topic, partition: p.partition, from: c.first, to: c.last, packets: c.packets.length };
    try {
      await this.dlq.send({ topic: this.deps.config.dlqTopic, acks: -1, messages: parkedMessages(c.packets, error) });
    } catch (dlqErr) {
      this.deps.logger.error({ ...where, err: error, dlq: errorMessage(dlqErr) }, 'a chunk keeps failing and the DLQ refused it too; fetching it again');
      return false;
    }
    this.failures.settled(p.key, c.first);
    this.failures.recordParked(`${p.topic}/${p.partition} offsets ${c.first}–${c.last}: ${error.slice(0, 200)}`);
    this.deps.metrics.inc('tool_audit_ingest_chunks_parked_total', 'Chunks that kept failing, sent whole to the DLQ topic (x-reason unwritable) and committed past');
    this.deps.metrics.inc('tool_audit_ingest_packets_parked_total', 'Packets of parked chunks, in the DLQ topic', {}, c.packets.length);
    this.deps.logger.error({ ...where, err: error }, 'a chunk kept failing: its packets are in the DLQ topic (x-reason unwritable); the partition moves on');
    return true;
  }

  private async sendToDlq(packets: RawPacket[], outcomes: PacketOutcome[]): Promise<void> {
    const messages = dlqMessages(packets, outcomes);
    if (messages.length === 0) return;
    // The quarantine row is the durable record; the DLQ is a convenience for stream consumers.
    await this.dlq.send({ topic: this.deps.config.dlqTopic, acks: -1, messages }).catch((err: unknown) => {
      this.deps.metrics.inc('tool_audit_dlq_failures_total', 'Poison packets quarantined but not copied to the DLQ', {}, messages.length);
      this.deps.logger.warn({ err: errorMessage(err) }, 'DLQ produce failed; packets are in quarantine');
    });
  }

  async start(): Promise<void> {
    const { config } = this.deps;
    await this.dlq.connect();
    await Promise.all(
      this.consumers.map(async (consumer) => {
        consumer.on(consumer.events.GROUP_JOIN, () => this.generations.set(consumer, (this.generations.get(consumer) ?? 0) + 1));
        consumer.on(consumer.events.CRASH, () => this.running.set(consumer, false));
        consumer.on(consumer.events.STOP, () => this.running.set(consumer, false));
        this.running.set(consumer, true);
        await consumer.connect();
        await consumer.subscribe({ topic: config.topic, fromBeginning: true });
        await consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          partitionsConsumedConcurrently: config.partitionsConsumedConcurrently ?? 3,
          eachBatch: (p) => this.eachBatch(consumer, p),
        });
      }),
    );
  }

  async stop(): Promise<void> {
    // No new batches; the ones in hand are written and their offsets committed (the consumers
    // must still be running for that), then the group is left.
    for (const c of this.consumers) {
      try {
        c.pause([{ topic: this.deps.config.topic }]);
      } catch {
        // kafkajs refuses to pause a consumer that is between runs (restarting after a crash of
        // its own, or not yet joined): it takes no batch then, so there is nothing to pause.
      }
    }
    this.stopping = true;
    this.wakeWaiters();
    await Promise.all([...this.chains.values()]);
    await Promise.all(this.consumers.map((c) => c.disconnect()));
    await this.dlq.disconnect();
  }

  health(): { ok: boolean; detail?: string } {
    const sink = this.sink.health();
    if (this.failures.parked === 0) return sink;
    // Parked chunks do not stop ingest (ready stays as the sink says), but an operator must see them.
    const parked = `${this.failures.parked} chunk(s) parked in the DLQ since start; last: ${this.failures.lastParked}`;
    return { ok: sink.ok, detail: sink.detail ? `${sink.detail}; ${parked}` : parked };
  }
}
