/**
 * The transport-independent ingest pipeline: decode → check MUST rules → de-duplicate by key →
 * batched insert. Used by HTTP ingest and by the Kafka worker alike. A batch resolves only when
 * every row and every quarantine record of it is in ClickHouse; on a ClickHouse fault it throws
 * a retryable AppError and the whole batch may be written again, safely.
 *
 * Two stages, so that JavaScript and ClickHouse work at the same time:
 *  - decode: write() decodes and checks its batch at once (pure CPU) and serializes the rows it
 *    may insert as TabSeparated lines into per-batch buffers; only keys, fingerprints and byte
 *    ranges stay on the JavaScript heap;
 *  - commit: one round at a time against ClickHouse — look up the keys, judge, insert. Batches
 *    decoded while a round was in ClickHouse are committed together in the next round (group
 *    commit): fewer, larger look-ups and inserts. Batches of one round are judged in arrival
 *    order, exactly as if they had been committed one after another.
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { Redactor, type RedactionPolicy } from '../schemas/redaction-policy.ts';
import { ColumnsBuilder, ColumnsReader, type BatchBuffers, type Columns } from './decode-batch.ts';
import { createDecodePool, type DecodePool } from './decode-pool.ts';
import { createKeyIndex, type KeyIndex, type KeyIndexProgress } from './key-index.ts';
import type { CallsStoredListener, PacketOutcome, RawPacket } from './ports.ts';
import { createRoundCommitter } from './round-commit.ts';
import { sourceKey } from './rows.ts';

export type { PacketOutcome } from './ports.ts';

/** Writes batches of raw packets to the segments. */
export interface SegmentWriter {
  /** Durable when resolved. Batches are committed in call order (several may share a round). */
  write(batch: RawPacket[]): Promise<PacketOutcome[]>;
  /** Loads what the writer must know before its first round (the key filter); write() waits for it anyway. */
  ready?(): Promise<void>;
  /** How the key filter's load is going (for /readyz). */
  progress?(): KeyIndexProgress;
  /** Writes the key filter's last snapshot; nothing is written after it. */
  close?(): Promise<void>;
}

/** Dependencies of {@link createSegmentWriter}. */
export interface SegmentWriterDeps {
  clickhouse: ClickHouseDoor;
  maxPacketBytes: number;
  dedupCacheEntries: number;
  metrics: MetricsRegistry;
  logger: Logger;
  /** Packets one commit round may take from the queue (a batch is never split); default 100,000. */
  maxRoundPackets?: number;
  /** A round waits for batches still being decoded until it has this many packets; default 50,000. */
  minRoundPackets?: number;
  /** Decode threads (decode-pool.ts); 0 decodes on the main thread, between event-loop turns. Default 0. */
  decodeThreads?: number;
  /** The deployment's redaction: secrets out of every row before it is written; absent: none. */
  redaction?: RedactionPolicy;
  /** Calls whose task is remembered to stamp their outputs; default 200,000 (~30 MB). */
  callTaskEntries?: number;
  /** Told of the calls each commit round wrote (budget spend); see ports.ts. */
  onCallsStored?: CallsStoredListener;
  /** Memory of one slice of the key filter (key-index.ts); default 256 MiB. */
  keyFilterMaxBytes?: number;
  /** The key filter's snapshot file and how often it is written (key-snapshot.ts); absent: none. */
  keySnapshot?: { path: string; everyMs: number; slackMs?: number };
}

/** A batch after the decode stage. */
interface Decoded {
  batch: RawPacket[];
  columns?: Columns;
  buffers: BatchBuffers;
  resolve: (o: PacketOutcome[]) => void;
  reject: (err: unknown) => void;
}

/** Packets decoded on the main thread between two yields to the event loop (a few milliseconds of work). */
const DECODE_SLICE = 256;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A batch in the decode stage; `done` is set when a decode thread has it. */
interface DecodeJob {
  d: Decoded;
  at: number;
  builder?: ColumnsBuilder;
  done?: Promise<void>;
  ready?: boolean;
}

/** Creates the pipeline's writer over one ClickHouse database. */
export function createSegmentWriter(deps: SegmentWriterDeps): SegmentWriter {
  return new BatchWriter(deps);
}

class BatchWriter implements SegmentWriter {
  private readonly commitRound: ReturnType<typeof createRoundCommitter>;
  private readonly maxRound: number;
  private readonly minRound: number;
  private readonly pool: DecodePool | undefined;
  private readonly redactor: Redactor | undefined;
  /** Decoded batches waiting for a commit round, in call order. */
  private readonly queue: Decoded[] = [];
  private committing = false;
  /** Batches being decoded, in call order. */
  private readonly toDecode: DecodeJob[] = [];
  private decoding = false;
  private readonly decodedWaiters: Array<() => void> = [];
  private readonly keyIndex: KeyIndex;

  constructor(private readonly deps: SegmentWriterDeps) {
    this.keyIndex = createKeyIndex({
      clickhouse: deps.clickhouse,
      maxBytes: deps.keyFilterMaxBytes ?? 256 * 1024 * 1024,
      metrics: deps.metrics,
      logger: deps.logger,
      ...(deps.keySnapshot ? { snapshotPath: deps.keySnapshot.path, snapshotEveryMs: deps.keySnapshot.everyMs, ...(deps.keySnapshot.slackMs === undefined ? {} : { snapshotSlackMs: deps.keySnapshot.slackMs }) } : {}),
    });
    this.maxRound = deps.maxRoundPackets ?? 100_000;
    this.minRound = Math.min(deps.minRoundPackets ?? 50_000, this.maxRound);
    this.redactor = deps.redaction ? new Redactor(deps.redaction) : undefined;
    this.commitRound = createRoundCommitter({
      clickhouse: deps.clickhouse,
      metrics: deps.metrics,
      dedupCacheEntries: deps.dedupCacheEntries,
      callTaskEntries: deps.callTaskEntries ?? 200_000,
      keyIndex: this.keyIndex,
      ...(deps.onCallsStored ? { onCallsStored: deps.onCallsStored } : {}),
      redactor: this.redactor,
    });
    this.pool = deps.decodeThreads ? createDecodePool(deps.decodeThreads, deps.redaction) : undefined;
  }

  ready(): Promise<void> {
    return this.keyIndex.ready();
  }

  progress(): KeyIndexProgress {
    return this.keyIndex.progress();
  }

  close(): Promise<void> {
    return this.keyIndex.close();
  }

  write(batch: RawPacket[]): Promise<PacketOutcome[]> {
    return new Promise<PacketOutcome[]>((resolve, reject) => {
      const job: DecodeJob = { d: { batch, buffers: {}, resolve, reject }, at: 0 };
      this.toDecode.push(job);
      // Small batches (HTTP) are not worth a thread hop.
      if (this.pool && batch.length >= 64) this.decodeInThread(job);
      else if (!this.decoding) void this.decodeLoop();
    });
  }

  private queued(): number {
    return this.queue.reduce((n, d) => n + d.batch.length, 0);
  }

  /** Moves decoded batches at the head of toDecode to the commit queue, keeping call order. */
  private promoteReady(): void {
    while (this.toDecode.length > 0 && (this.toDecode[0] as DecodeJob).ready) this.queue.push((this.toDecode.shift() as DecodeJob).d);
    for (const w of this.decodedWaiters.splice(0)) w();
    if (this.queue.length > 0 && !this.committing) void this.drain();
  }

  private failed(job: DecodeJob, err: unknown): void {
    this.toDecode.splice(this.toDecode.indexOf(job), 1);
    job.d.reject(err);
    this.promoteReady();
  }

  /** Hands a batch to a decode thread. */
  private decodeInThread(job: DecodeJob): void {
    job.done = (this.pool as DecodePool).decode(job.d.batch, this.deps.maxPacketBytes).then(
      (r) => {
        job.d.columns = r.columns;
        job.d.buffers = r.buffers;
        job.ready = true;
        this.promoteReady();
      },
      (err: unknown) => this.failed(job, err),
    );
  }

  /**
   * Decodes queued batches in order on the main thread, a slice at a time: between slices the
   * event loop runs, so a finished look-up or insert is followed up at once instead of waiting
   * behind a whole batch's decoding (ClickHouse would sit idle meanwhile).
   */
  private async decodeLoop(): Promise<void> {
    this.decoding = true;
    // Batches handed over in the same tick are queued before any is decoded.
    await yieldToEventLoop();
    for (;;) {
      const job = this.toDecode.find((j) => !j.ready && !j.done);
      if (!job) break;
      const start = performance.now();
      try {
        this.decodeSlice(job);
      } catch (err) {
        this.failed(job, err);
        continue;
      }
      this.deps.metrics.inc('tool_audit_ingest_stage_seconds_total', 'Wall time spent per ingest stage', { stage: 'decode' }, (performance.now() - start) / 1000);
      if (job.at === job.d.batch.length) {
        job.d.columns = (job.builder ?? new ColumnsBuilder(0)).finish();
        job.builder = undefined;
        job.ready = true;
        this.promoteReady();
      }
      await yieldToEventLoop();
    }
    this.decoding = false;
  }

  /** Decodes the next DECODE_SLICE packets of a job. */
  private decodeSlice(job: DecodeJob): void {
    const b = job.d.batch;
    const to = Math.min(job.at + DECODE_SLICE, b.length);
    job.builder ??= new ColumnsBuilder(b.length, this.redactor);
    for (let i = job.at; i < to; i++) {
      const p = b[i] as RawPacket;
      job.builder.decode(i, p.raw, p.bytes, sourceKey(p.source), this.deps.maxPacketBytes, job.d.buffers, p.encoding);
    }
    job.at = to;
  }

  /** Commits queued batches round by round, until the queue is empty. */
  private async drain(): Promise<void> {
    this.committing = true;
    while (this.queue.length > 0) {
      // Larger rounds cost ClickHouse less per row (fewer look-ups, inserts, parts and merges):
      // while more batches are being decoded, let them join, up to minRoundPackets.
      while (this.toDecode.length > 0 && this.queued() < this.minRound) await new Promise<void>((resolve) => this.decodedWaiters.push(resolve));
      let n = 0;
      let take = 0;
      while (take < this.queue.length && (take === 0 || n + (this.queue[take] as Decoded).batch.length <= this.maxRound)) n += (this.queue[take++] as Decoded).batch.length;
      const round = this.queue.splice(0, take);
      try {
        const outcomes = await this.commitRound(round.map((d) => ({ batch: d.batch, reader: new ColumnsReader(d.columns as Columns), buffers: d.buffers })));
        round.forEach((d, k) => d.resolve(outcomes[k] as PacketOutcome[]));
      } catch (err) {
        for (const d of round) d.reject(err);
      }
    }
    this.committing = false;
  }
}
