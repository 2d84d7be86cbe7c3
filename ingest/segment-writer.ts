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
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { AppError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import type { PacketType } from '../schemas/packets.ts';
import { ContentSeen, DedupCache } from './dedup-cache.ts';
import { ColumnsBuilder, ColumnsReader, type BatchBuffers, type Columns } from './decode-batch.ts';
import { createDecodePool, type DecodePool } from './decode-pool.ts';
import { FifoMap } from './fifo-map.ts';
import {
  CONTENT_COLUMNS,
  KIND_PACKET_TYPE,
  quarantineRow,
  SEGMENT_COLUMNS,
  sourceKey,
  STAMPED_OUTPUT_COLUMNS,
  tsvField,
  type Accepted,
  type LineBuffer,
  type RawPacket,
  type Rejection,
} from './rows.ts';
import { storedDependencies, storedInvocations, storedOutputs, storedQuarantine } from './segment-lookups.ts';

/** What happened to one packet of a batch. */
export interface PacketOutcome {
  status: 'accepted' | 'duplicate' | 'rejected';
  packetType: PacketType | null;
  ids: string[];
  reason?: { code: string; message: string };
}

/** Writes batches of raw packets to the segments. */
export interface SegmentWriter {
  /** Durable when resolved. Batches are committed in call order (several may share a round). */
  write(batch: RawPacket[]): Promise<PacketOutcome[]>;
}

/** Dependencies of {@link createSegmentWriter}. */
export interface SegmentWriterDeps {
  clickhouse: ClickHouseClient;
  database: string;
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
  /** Calls whose task is remembered to stamp their outputs; default 200,000 (~30 MB). */
  callTaskEntries?: number;
}

type Kind = Accepted['kind'];

/** A batch after the decode stage. */
interface Decoded {
  batch: RawPacket[];
  columns?: Columns;
  buffers: BatchBuffers;
  resolve: (o: PacketOutcome[]) => void;
  reject: (err: unknown) => void;
}

type BodyPart = { lines: LineBuffer; start: number; end: number };

const CONTENT_REFRESH_MS = 24 * 3600 * 1000;
const KINDS = ['invocation', 'output', 'dependency'] as const;

/** Packets decoded on the main thread between two yields to the event loop (a few milliseconds of work). */
const DECODE_SLICE = 256;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One Buffer of the given line ranges, adjacent ranges of a buffer copied as one. */
function joinParts(parts: BodyPart[]): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  let cur: BodyPart | undefined;
  for (const p of parts) {
    if (cur && cur.lines === p.lines && cur.end === p.start) {
      cur.end = p.end;
      continue;
    }
    if (cur) {
      chunks.push(cur.lines.buf.subarray(cur.start, cur.end));
      total += cur.end - cur.start;
    }
    cur = { lines: p.lines, start: p.start, end: p.end };
  }
  if (cur) {
    chunks.push(cur.lines.buf.subarray(cur.start, cur.end));
    total += cur.end - cur.start;
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
}

/** Lines of the given ranges, each with one more TabSeparated field before its newline. */
function joinWithField(keyed: Array<{ key: string; part: BodyPart }>, field: (key: string) => string | null): Buffer {
  // One buffer, sized first: a Buffer per line (and a concat) costs more than the copying.
  const extras = keyed.map(({ key }) => `\t${tsvField(field(key))}\n`);
  let total = 0;
  keyed.forEach(({ part }, i) => (total += part.end - 1 - part.start + Buffer.byteLength(extras[i] as string)));
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  keyed.forEach(({ part }, i) => {
    at += part.lines.buf.copy(out, at, part.start, part.end - 1);
    at += out.write(extras[i] as string, at);
  });
  return out;
}

type RawInsert = (p: { table: string; values: Buffer; format: 'TabSeparated'; columns: readonly string[]; settings: Record<string, string> }) => Promise<unknown>;

/**
 * Embedded ClickHouse (chDB) takes an insert body as a Buffer without copying it through
 * JavaScript strings; the client's generic insert converts it twice. Found by feature
 * detection on the client's connection; any other client uses the generic insert.
 */
function chdbRawInsert(ch: ClickHouseClient): RawInsert | undefined {
  const raw = (ch as unknown as { connection?: { chdb?: { rawInsert?: unknown } } }).connection?.chdb?.rawInsert;
  return typeof raw === 'function' ? (raw as RawInsert) : undefined;
}

/** Creates the pipeline's writer over one ClickHouse database. */
export function createSegmentWriter(deps: SegmentWriterDeps): SegmentWriter {
  const { clickhouse: ch, database: db, metrics } = deps;
  const maxRound = deps.maxRoundPackets ?? 100_000;
  const cache = new DedupCache(deps.dedupCacheEntries);
  const contentSeen = new ContentSeen(deps.dedupCacheEntries);
  // call_id → task_id of calls this writer saw: output packets carry no task_id, and the emitter
  // sends a call and then its output under the same Kafka key, so both reach this writer in order.
  const callTasks = new FifoMap<string>(deps.callTaskEntries ?? 200_000);
  const rawInsert = chdbRawInsert(ch);
  const queue: Decoded[] = [];
  let committing = false;
  const pool: DecodePool | undefined = deps.decodeThreads ? createDecodePool(deps.decodeThreads) : undefined;
  /** Batches being decoded, in call order; `done` is set by a decode thread. */
  const toDecode: Array<{ d: Decoded; at: number; builder?: ColumnsBuilder; done?: Promise<void>; ready?: boolean }> = [];
  let decoding = false;
  const decodedWaiters: Array<() => void> = [];
  const minRound = Math.min(deps.minRoundPackets ?? 50_000, maxRound);
  const queued = () => queue.reduce((n, d) => n + d.batch.length, 0);
  const wake = () => {
    for (const w of decodedWaiters.splice(0)) w();
  };

  /** Moves decoded batches at the head of toDecode to the commit queue, keeping call order. */
  function promoteReady(): void {
    while (toDecode.length > 0 && (toDecode[0] as (typeof toDecode)[number]).ready) {
      queue.push((toDecode.shift() as (typeof toDecode)[number]).d);
    }
    wake();
    if (queue.length > 0 && !committing) void drain();
  }

  /** Hands a batch to a decode thread. */
  function decodeInThread(job: (typeof toDecode)[number]): void {
    job.done = (pool as DecodePool).decode(job.d.batch, deps.maxPacketBytes).then(
      (r) => {
        job.d.columns = r.columns;
        job.d.buffers = r.buffers;
        job.ready = true;
        promoteReady();
      },
      (err: unknown) => {
        toDecode.splice(toDecode.indexOf(job), 1);
        job.d.reject(err);
        promoteReady();
      },
    );
  }

  /**
   * Decodes queued batches in order on the main thread, a slice at a time: between slices the
   * event loop runs, so a finished look-up or insert is followed up at once instead of waiting
   * behind a whole batch's decoding (ClickHouse would sit idle meanwhile).
   */
  async function decodeLoop(): Promise<void> {
    decoding = true;
    // Batches handed over in the same tick are queued before any is decoded.
    await yieldToEventLoop();
    for (;;) {
      const job = toDecode.find((j) => !j.ready && !j.done);
      if (!job) break;
      const start = performance.now();
      const to = Math.min(job.at + DECODE_SLICE, job.d.batch.length);
      try {
        const b = job.d.batch;
        job.builder ??= new ColumnsBuilder(b.length);
        for (let i = job.at; i < to; i++) {
          const p = b[i] as RawPacket;
          job.builder.decode(i, p.raw, p.bytes, sourceKey(p.source), deps.maxPacketBytes, job.d.buffers);
        }
      } catch (err) {
        toDecode.splice(toDecode.indexOf(job), 1);
        job.d.reject(err);
        promoteReady();
        continue;
      }
      job.at = to;
      stageSeconds('decode', start);
      if (job.at === job.d.batch.length) {
        job.d.columns = (job.builder ?? new ColumnsBuilder(0)).finish();
        job.builder = undefined;
        job.ready = true;
        promoteReady();
      }
      await yieldToEventLoop();
    }
    decoding = false;
  }

  async function drain(): Promise<void> {
    committing = true;
    while (queue.length > 0) {
      // Larger rounds cost ClickHouse less per row (fewer look-ups, inserts, parts and merges):
      // while more batches are being decoded, let them join, up to minRoundPackets.
      while (toDecode.length > 0 && queued() < minRound) await new Promise<void>((resolve) => decodedWaiters.push(resolve));
      let n = 0;
      let take = 0;
      while (take < queue.length && (take === 0 || n + (queue[take] as Decoded).batch.length <= maxRound)) n += (queue[take++] as Decoded).batch.length;
      const round = queue.splice(0, take);
      try {
        const outcomes = await commit(round);
        round.forEach((d, k) => d.resolve(outcomes[k] as PacketOutcome[]));
      } catch (err) {
        for (const d of round) d.reject(err);
      }
    }
    committing = false;
  }

  /** Judges and writes one round; returns the outcomes per batch. */
  async function commit(round: Decoded[]): Promise<PacketOutcome[][]> {
    // One index space over the round's batches, in arrival order: packet i is packet local[i]
    // of batch owner[i].
    let total = 0;
    for (const d of round) total += d.batch.length;
    const owner = new Int32Array(total);
    const local = new Int32Array(total);
    const readers = round.map((d) => new ColumnsReader(d.columns as Columns));
    {
      let i = 0;
      round.forEach((d, b) => {
        for (let k = 0; k < d.batch.length; k++, i++) {
          owner[i] = b;
          local[i] = k;
        }
      });
    }
    const packet = (i: number) => (round[owner[i] as number] as Decoded).batch[local[i] as number] as RawPacket;
    const col = (i: number) => readers[owner[i] as number] as ColumnsReader;
    const at = (i: number) => local[i] as number;
    const keyOf = (i: number) => col(i).key(at(i));
    const fpOf = (i: number) => col(i).fp(at(i));
    const idsOf = (i: number) => col(i).ids(at(i));
    const part = (i: number, kind: Kind | 'content'): BodyPart => {
      const c = (readers[owner[i] as number] as ColumnsReader).c;
      const k = local[i] as number;
      const lines = (round[owner[i] as number] as Decoded).buffers[kind] as LineBuffer;
      return kind === 'content' ? { lines, start: c.cStart[k] as number, end: c.cEnd[k] as number } : { lines, start: c.start[k] as number, end: c.end[k] as number };
    };

    const outcomes: PacketOutcome[] = new Array(total);
    const rejected: Array<{ i: number; r: Rejection }> = [];
    const copies: Array<{ i: number; first: number }> = [];
    /** Key → packet index of the round's first copy, per kind: the candidates to write. */
    const fresh: Record<Kind, Map<string, number>> = { invocation: new Map(), output: new Map(), dependency: new Map() };
    const counts = { duplicate: 0, invocation: 0, output: 0, dependency: 0 };

    const judge = (i: number, kind: Kind, key: string, fp: string, storedFp: string | undefined): boolean => {
      if (storedFp === undefined) return false;
      if (storedFp === fp) {
        outcomes[i] = { status: 'duplicate', packetType: KIND_PACKET_TYPE[kind], ids: idsOf(i) };
      } else {
        const code = kind === 'invocation' ? 'I1_call_id_reused' : kind === 'output' ? 'I1_output_id_reused' : 'I1_dependency_reused';
        const what = kind === 'invocation' ? 'call_id' : kind === 'output' ? 'output_id' : 'dependency pair';
        rejected.push({ i, r: { code, message: `a different packet with this ${what} (${key}) already exists (I1)`, packetType: KIND_PACKET_TYPE[kind], ids: idsOf(i) } });
      }
      return true;
    };

    for (let i = 0; i < total; i++) {
      const kind = col(i).kindOf(at(i));
      if (kind === undefined) {
        rejected.push({ i, r: col(i).rejection(at(i)) as Rejection });
        continue;
      }
      const key = keyOf(i);
      const fp = fpOf(i);
      const first = fresh[kind].get(key);
      const firstFp = first === undefined ? undefined : fpOf(first);
      if (first !== undefined && firstFp === fp) {
        // Same packet twice in one round: it shares the fate of its first copy (below).
        copies.push({ i, first });
        continue;
      }
      if (judge(i, kind, key, fp, firstFp ?? cache.get(kind, key, fp))) continue;
      fresh[kind].set(key, i);
    }

    // What the segments already hold decides between a redelivery and a conflicting reuse. One
    // round of look-ups: the content hashes of every candidate output (a superset of those
    // finally written) and the quarantine records of packets rejected at decode.
    const kafkaKeys = (list: Array<{ i: number }>) => list.filter(({ i }) => packet(i).source.kind === 'kafka').map(({ i }) => sourceKey(packet(i).source));
    const decodeRejectedKafka = kafkaKeys(rejected);
    const lookupStart = performance.now();
    const [invs, outs, deps_, seenQuarantine] = await Promise.all([
      fresh.invocation.size ? storedInvocations(ch, db, [...fresh.invocation.keys()]) : new Map<string, string>(),
      fresh.output.size ? storedOutputs(ch, db, [...fresh.output.keys()]) : new Map<string, string>(),
      fresh.dependency.size
        ? storedDependencies(ch, db, [...fresh.dependency.values()].map((i) => ({ task_id: col(i).taskId(at(i)), preceding_call_id: keyOf(i).slice(0, 36) })))
        : new Map<string, string>(),
      decodeRejectedKafka.length ? storedQuarantine(ch, db, decodeRejectedKafka) : new Set<string>(),
    ]);
    stageSeconds('lookup', lookupStart);
    const stored = { invocation: invs, output: outs, dependency: deps_ };
    const judgedBefore = rejected.length;
    for (const kind of KINDS) {
      for (const [key, i] of fresh[kind]) {
        const s = stored[kind].get(key);
        if (s !== undefined && judge(i, kind, key, fpOf(i), s)) fresh[kind].delete(key);
      }
    }

    // A copy of a packet rejected above is rejected (and quarantined under its own source) too.
    const rejectedFirst = new Map(rejected.map(({ i, r }) => [i, r]));
    for (const { i, first } of copies) {
      const r = rejectedFirst.get(first);
      if (r) rejected.push({ i, r });
    }

    // A poison record redelivered from the same Kafka offset is already quarantined. Keys of
    // packets rejected only now (I1 and their copies) are looked up here; that is rare.
    const late = kafkaKeys(rejected.slice(judgedBefore));
    const alreadyQuarantined = late.length ? new Set([...seenQuarantine, ...(await storedQuarantine(ch, db, late))]) : seenQuarantine;
    const quarantine = new Map<string, ReturnType<typeof quarantineRow>>();
    for (const { i, r } of rejected) {
      const q = quarantineRow(packet(i), r);
      if (!alreadyQuarantined.has(q.source_key)) quarantine.set(q.source_key, q);
    }

    // Output content once per hash, and again when last seen more than a day ago. What this
    // process wrote is remembered; a hash first seen here is written even if another process (or
    // an earlier run) wrote it: ReplacingMergeTree(last_seen) keeps one row per hash, the newest.
    // (Asking ClickHouse first costs a scan of every stored hash per round, growing with the table.)
    const contents = new Map<string, { key: string; part: BodyPart; ms: number }>();
    for (const i of fresh.output.values()) {
      const hash = col(i).contentHash(at(i));
      if (contents.has(hash)) continue;
      const lastSeen = col(i).lastSeen(at(i));
      const ms = Date.parse(`${lastSeen}Z`);
      const last = contentSeen.get(hash);
      if (last === undefined || ms - last > CONTENT_REFRESH_MS) contents.set(hash, { key: `${hash}@${lastSeen}`, part: part(i, 'content'), ms });
    }

    // The task of each output's call: a call of this round that is written or already stored
    // (an identical redelivery), else one this writer saw recently ('' = the call has no task),
    // else null (unknown: the output becomes an orphan, migration 007).
    const roundTasks = new Map<string, string>();
    for (let i = 0; i < total; i++) {
      if (col(i).kindOf(at(i)) !== 'invocation') continue;
      if (fresh.invocation.get(keyOf(i)) === i || outcomes[i]?.status === 'duplicate') roundTasks.set(keyOf(i), col(i).taskId(at(i)));
    }
    const outputTask = (i: number): string | null => {
      const call = col(i).callId(at(i));
      return roundTasks.get(call) ?? callTasks.get(call) ?? null;
    };

    // Every row of a segment is identified by its key; the key list seeds the insert token. A
    // content goes in before the output rows that refer to it: if the round fails in between,
    // the retry finds the outputs missing and writes both again (an output found stored is
    // never rewritten, so the other order could lose its content).
    const segment = (kind: Kind) => [...fresh[kind]].map(([key, i]) => ({ key, part: part(i, kind) }));
    const insertStart = performance.now();
    await Promise.all([
      insertLines('tool_invocations', SEGMENT_COLUMNS.tool_invocations, segment('invocation')),
      insertLines('output_contents', CONTENT_COLUMNS, [...contents.values()]).then(() =>
        insertLines('tool_outputs', STAMPED_OUTPUT_COLUMNS, segment('output'), (k) => outputTask(fresh.output.get(k) as number)),
      ),
      insertLines('tool_workflows', SEGMENT_COLUMNS.tool_workflows, segment('dependency')),
      insertRows('quarantine', [...quarantine.values()].map((q) => ({ key: q.source_key, row: q }))),
    ]);
    stageSeconds('insert', insertStart);

    for (const [hash, c] of contents) contentSeen.set(hash, c.ms);
    for (const [call, task] of roundTasks) callTasks.set(call, task);
    for (const kind of KINDS) {
      for (const [key, i] of fresh[kind]) {
        cache.add(kind, key, fpOf(i));
        outcomes[i] = { status: 'accepted', packetType: KIND_PACKET_TYPE[kind], ids: idsOf(i) };
        counts[kind]++;
      }
      if (counts[kind]) metrics.inc('tool_audit_ingest_rows_total', 'Rows written to segments', { segment: KIND_PACKET_TYPE[kind] }, counts[kind]);
    }
    for (const { i, r } of rejected) {
      outcomes[i] = { status: 'rejected', packetType: r.packetType, ids: r.ids, reason: { code: r.code, message: r.message } };
      metrics.inc('tool_audit_quarantined_total', 'Packets quarantined, by reason', { reason: r.code });
    }
    for (const { i, first } of copies) {
      if (!outcomes[i]) outcomes[i] = { ...(outcomes[first] as PacketOutcome), status: 'duplicate' };
    }
    for (const o of outcomes) if (o.status === 'duplicate') counts.duplicate++;
    if (counts.duplicate) metrics.inc('tool_audit_ingest_duplicates_total', 'Redelivered identical packets skipped (I1)', {}, counts.duplicate);
    metrics.inc('tool_audit_ingest_packets_total', 'Packets processed by the ingest pipeline', {}, total);
    metrics.inc('tool_audit_ingest_commit_rounds_total', 'Commit rounds (look-ups + inserts) against ClickHouse');

    const out: PacketOutcome[][] = [];
    let from = 0;
    for (const d of round) {
      out.push(outcomes.slice(from, from + d.batch.length));
      from += d.batch.length;
    }
    return out;
  }

  /** Time per stage, for /metrics: how busy the JavaScript (decode) and ClickHouse (look-up, insert) sides are. */
  function stageSeconds(stage: 'decode' | 'lookup' | 'insert', since: number): void {
    metrics.inc('tool_audit_ingest_stage_seconds_total', 'Wall time spent per ingest stage', { stage }, (performance.now() - since) / 1000);
  }

  /**
   * The token makes a retried insert of the same rows a no-op inside ClickHouse's dedup window.
   * Keys in round order: a retried round decodes the same batches in the same order (a round
   * composed differently is told apart by the key look-ups instead).
   */
  const token = (table: string, keys: string[]) => createHash('sha256').update(table).update(keys.join('\n')).digest('hex');

  /** Inserts lines; `extra` appends one more field (the last column) to the line of each key. */
  async function insertLines(
    table: string,
    columns: readonly string[],
    keyed: Array<{ key: string; part: BodyPart }>,
    extra?: (key: string) => string | null,
  ): Promise<void> {
    if (keyed.length === 0) return;
    const body = extra ? joinWithField(keyed, extra) : joinParts(keyed.map((k) => k.part));
    // A retry after a failure in a materialized view (task_rows, migration 007) must still reach
    // the views whose rows are missing: each dependent table deduplicates on its own.
    const dedupToken = token(table, keyed.map((k) => k.key));
    const settings = { insert_deduplication_token: dedupToken, deduplicate_blocks_in_dependent_materialized_views: '1' };
    await run(table, () =>
      rawInsert
        ? rawInsert({ table: `${db}.${table}`, values: body, format: 'TabSeparated', columns, settings })
        : ch.insert({
            table: `${db}.${table}`,
            values: Readable.from([body], { objectMode: false }),
            format: 'TabSeparated',
            columns: columns as [string, ...string[]],
            clickhouse_settings: { insert_deduplication_token: dedupToken, deduplicate_blocks_in_dependent_materialized_views: 1 },
          }),
    );
  }

  async function insertRows(table: string, keyed: Array<{ key: string; row: object }>): Promise<void> {
    if (keyed.length === 0) return;
    await run(table, () =>
      ch.insert({
        table: `${db}.${table}`,
        values: keyed.map((k) => k.row),
        format: 'JSONEachRow',
        clickhouse_settings: { insert_deduplication_token: token(table, keyed.map((k) => k.key)), date_time_input_format: 'best_effort' },
      }),
    );
  }

  async function run(table: string, insert: () => Promise<unknown>): Promise<void> {
    // The key look-ups cover retries beyond the dedup window and redeliveries in other batches.
    try {
      await insert();
    } catch (err) {
      throw new AppError('CLICKHOUSE_UNAVAILABLE', `insert into ${table} failed: ${(err as Error).message}`, { retryable: true, cause: err });
    }
  }

  return {
    write(batch) {
      return new Promise<PacketOutcome[]>((resolve, reject) => {
        const job: (typeof toDecode)[number] = { d: { batch, buffers: {}, resolve, reject }, at: 0 };
        toDecode.push(job);
        // Small batches (HTTP) are not worth a thread hop.
        if (pool && batch.length >= 64) decodeInThread(job);
        else if (!decoding) void decodeLoop();
      });
    },
  };
}
