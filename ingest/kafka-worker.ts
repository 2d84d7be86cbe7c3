/**
 * `tool-audit ingest`: a kafkajs consumer-group member that runs the segment writer on
 * tool_audit.packets. Offsets are committed only after a chunk's rows and quarantine records
 * are in ClickHouse; redelivered packets are recognised by key (see segment-lookups.ts), so a
 * crash or rebalance at any point never makes a second visible row.
 */
import type { Consumer, EachBatchPayload, IHeaders, Kafka, Producer } from 'kafkajs';
import { errorMessage, isRetryable } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
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
  /** Packets handed to the writer whose offsets are not committed yet, at most; default 100,000. */
  maxInFlightPackets?: number;
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

/**
 * A Kafka record as a {@link RawPacket}: its text is made from the record's bytes when read
 * (once by the decoder, again only for quarantine or the DLQ), so thousands of packet strings
 * do not stay on the heap while their rows are written.
 */
class KafkaPacket implements RawPacket {
  constructor(
    private readonly value: Buffer | null,
    readonly bytes: number,
    readonly source: RawPacket['source'],
    readonly requestId: string | undefined,
  ) {}

  get raw(): string {
    return this.value ? this.value.toString('utf8') : '';
  }
}

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

  /**
   * What the write and commit steps need of a batch. Not the kafkajs payload: its functions keep
   * the whole batch (every message object) alive until the last chunk is committed. A partition
   * counts as lost once its consumer has rejoined the group since the batch was fetched.
   */
  type Partition = { topic: string; partition: number; key: string; epoch: string; isRunning: () => boolean; isStale: () => boolean };
  const generations = new Map<Consumer, number>();
  const running = new Map<Consumer, boolean>();
  /** Seeks per partition: a seek starts a new epoch (batches fetched before it are stale). */
  const seeks = new Map<string, number>();
  const epochOf = (consumer: Consumer, key: string) => `${consumers.indexOf(consumer)}:${generations.get(consumer) ?? 0}:${seeks.get(key) ?? 0}`;
  /**
   * Partition → epoch (consumer and group generation) in which one of its chunks could not be
   * committed. Later chunks of that epoch must not be committed either: their offset would
   * cover the missing one. After a rejoin kafkajs fetches again from the committed offset.
   */
  const blocked = new Map<string, string>();

  async function writeUntilDone(packets: RawPacket[], p: Partition): Promise<PacketOutcome[] | undefined> {
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
      }
    }
  }

  const eachBatchOf = (consumer: Consumer) => (p: EachBatchPayload) => eachBatch(consumer, p);

  // Offsets follow durability without holding up fetching: a batch is handed to the writer and
  // its fetch position moves on at once, while a chain per partition awaits the chunks in order
  // and commits each chunk's offset only once its rows and quarantine records are durable.
  // (kafkajs fetches again only when every batch of its last fetch is handled, so waiting for
  // ClickHouse here would leave decoding idle while rows are written, and vice versa.)
  const chains = new Map<string, Promise<void>>();
  let inFlight = 0;
  const maxInFlight = config.maxInFlightPackets ?? 100_000;
  const settled: Array<() => void> = [];

  async function eachBatch(consumer: Consumer, p: EachBatchPayload): Promise<void> {
    const { batch } = p;
    metrics.set('tool_audit_ingest_partition_lag', 'Messages behind the partition high watermark', Number(batch.offsetLag()), {
      partition: String(batch.partition),
    });
    if (stopping || !p.isRunning() || p.isStale() || batch.isEmpty()) return;
    if (inFlight >= maxInFlight) {
      // Back-pressure: the writer is behind; heartbeats keep the membership meanwhile.
      const beat = setInterval(() => void p.heartbeat().catch(() => undefined), 2_000);
      try {
        while (inFlight >= maxInFlight && !stopping) await new Promise<void>((resolve) => settled.push(resolve));
      } finally {
        clearInterval(beat);
      }
      if (stopping || !p.isRunning() || p.isStale()) return;
    }
    // Every chunk goes to the writer now: they are decoded while earlier rounds are written.
    const key = `${batch.topic}/${batch.partition}`;
    const epoch = epochOf(consumer, key);
    const part: Partition = {
      topic: batch.topic,
      partition: batch.partition,
      key,
      epoch,
      isRunning: () => running.get(consumer) === true,
      isStale: () => epochOf(consumer, key) !== epoch,
    };
    const chunks: Chunk[] = [];
    for (let i = 0; i < batch.messages.length; i += config.batchMaxPackets) {
      const chunk = batch.messages.slice(i, i + config.batchMaxPackets);
      const packets: RawPacket[] = chunk.map(
        (m) =>
          new KafkaPacket(
            m.value,
            // The HTTP edge forwards an oversized packet truncated, with its real size in a header.
            Math.max(m.value?.length ?? 0, Number(header(m.headers, 'x-original-bytes') ?? 0)),
            { kind: 'kafka', topic: batch.topic, partition: batch.partition, offset: m.offset },
            header(m.headers, 'x-request-id'),
          ),
      );
      const written = writeUntilDone(packets, part);
      // Awaited in order below; a failure must not count as unhandled meanwhile.
      written.catch(() => undefined);
      chunks.push({ first: (chunk[0] as { offset: string }).offset, last: (chunk[chunk.length - 1] as { offset: string }).offset, packets, written });
      inFlight += packets.length;
    }
    p.resolveOffset(batch.lastOffset());
    const tail = (chains.get(key) ?? Promise.resolve()).then(() => commitInOrder(consumer, part, chunks));
    const settledTail = tail.catch((err: unknown) => logger.error({ err: errorMessage(err) }, 'ingest chain failed'));
    chains.set(key, settledTail);
    void settledTail.then(() => {
      if (chains.get(key) === settledTail) chains.delete(key);
    });
  }

  interface Chunk {
    first: string;
    last: string;
    packets: RawPacket[];
    written: Promise<PacketOutcome[] | undefined>;
  }

  async function commitInOrder(consumer: Consumer, p: Partition, chunks: Chunk[]): Promise<void> {
    const { topic, partition } = p;
    for (const { first, last, packets, written } of chunks) {
      try {
        let outcomes: PacketOutcome[] | undefined;
        if (blocked.get(p.key) !== p.epoch) {
          try {
            outcomes = await written;
          } catch (err) {
            // Not a ClickHouse fault (those are retried until stop): fetch the partition again
            // from this chunk, after a pause. The seek starts a new epoch; what is still in
            // flight from this one is not committed.
            logger.error({ err: errorMessage(err), topic, partition, offset: first }, 'ingest of a chunk failed; fetching it again');
            metrics.inc('tool_audit_ingest_chunk_failures_total', 'Chunks that failed for another reason than ClickHouse and were fetched again');
            blocked.set(p.key, p.epoch);
            if (!stopping && !p.isStale()) refetch(consumer, p, first);
          }
        }
        // Given up (stopped while ClickHouse refused writes), the partition moved, or an earlier
        // chunk was not committed: nothing more is committed for it in this epoch; its next
        // owner resumes from the last committed offset and the writer recognises what is stored.
        if (!outcomes || p.isStale() || blocked.get(p.key) === p.epoch) {
          blocked.set(p.key, p.epoch);
          void written.catch(() => undefined);
          continue;
        }
        await sendToDlq(packets, outcomes);
        await consumer
          .commitOffsets([{ topic, partition, offset: (BigInt(last) + 1n).toString() }])
          .catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'offset commit failed; the chunk may be redelivered and deduplicated'));
        metrics.inc('tool_audit_ingest_kafka_messages_total', 'Kafka messages ingested and committed', {}, packets.length);
      } finally {
        inFlight -= packets.length;
        for (const w of settled.splice(0)) w();
      }
    }
  }

  /** Seeks a partition back to offset, paused for a second so that a persistent failure does not spin. */
  function refetch(consumer: Consumer, p: Partition, offset: string): void {
    seeks.set(p.key, (seeks.get(p.key) ?? 0) + 1);
    const tp = [{ topic: p.topic, partitions: [p.partition] }];
    try {
      consumer.pause(tp);
      consumer.seek({ topic: p.topic, partition: p.partition, offset });
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'seek failed; the partition is fetched again after the next rebalance');
    }
    setTimeout(() => {
      if (!stopping) consumer.resume(tp);
    }, 1_000).unref();
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
          consumer.on(consumer.events.GROUP_JOIN, () => generations.set(consumer, (generations.get(consumer) ?? 0) + 1));
          consumer.on(consumer.events.CRASH, () => running.set(consumer, false));
          consumer.on(consumer.events.STOP, () => running.set(consumer, false));
          running.set(consumer, true);
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
      // No new batches; the ones in hand are written and their offsets committed (the consumers
      // must still be running for that), then the group is left.
      for (const c of consumers) c.pause([{ topic: config.topic }]);
      stopping = true;
      for (const w of settled.splice(0)) w();
      await Promise.all([...chains.values()]);
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
