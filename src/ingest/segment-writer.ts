/**
 * The transport-independent ingest pipeline: decode → check MUST rules → de-duplicate by key →
 * batched insert. Used by HTTP ingest and by the Kafka worker alike. A batch resolves only when
 * every row and every quarantine record of it is in ClickHouse; on a ClickHouse fault it throws
 * a retryable AppError and the whole batch may be written again, safely.
 */
import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { MetricsRegistry } from '../metrics.ts';
import type { PacketType } from '../schemas/packets.ts';
import { DedupCache } from './dedup-cache.ts';
import { decodePacket } from './decode-packet.ts';
import { acceptedIds, ANALYZER_FINGERPRINT, KIND_PACKET_TYPE, quarantineRow, type Accepted, type RawPacket, type Rejection } from './rows.ts';
import { storedContents, storedDependencies, storedInvocations, storedOutputs, storedQuarantine } from './segment-lookups.ts';

/** What happened to one packet of a batch. */
export interface PacketOutcome {
  status: 'accepted' | 'duplicate' | 'rejected';
  packetType: PacketType | null;
  ids: string[];
  reason?: { code: string; message: string };
}

/** Writes batches of raw packets to the segments. */
export interface SegmentWriter {
  /** Durable when resolved. One batch at a time: concurrent calls are queued. */
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
}

const CONTENT_REFRESH_MS = 24 * 3600 * 1000;

/** Creates the pipeline's writer over one ClickHouse database. */
export function createSegmentWriter(deps: SegmentWriterDeps): SegmentWriter {
  const { clickhouse: ch, database: db, metrics } = deps;
  const cache = new DedupCache(deps.dedupCacheEntries);
  let queue: Promise<unknown> = Promise.resolve();

  async function writeNow(batch: RawPacket[]): Promise<PacketOutcome[]> {
    const outcomes: PacketOutcome[] = new Array(batch.length);
    const rejected: Array<{ i: number; r: Rejection }> = [];
    const copies: Array<{ i: number; first: number }> = [];
    const fresh = { invocation: new Map<string, { i: number; a: Accepted }>(), output: new Map(), dependency: new Map() } as Record<
      Accepted['kind'],
      Map<string, { i: number; a: Accepted }>
    >;

    const judge = (i: number, a: Accepted, storedFp: string | undefined): boolean => {
      if (storedFp === undefined) return false;
      // A pair the analyzer linked first is the same fact as an emitted dependency for it.
      if (storedFp === a.row.fingerprint || (a.kind === 'dependency' && storedFp === ANALYZER_FINGERPRINT)) {
        outcomes[i] = { status: 'duplicate', packetType: KIND_PACKET_TYPE[a.kind], ids: acceptedIds(a) };
      } else {
        const code = a.kind === 'invocation' ? 'I1_call_id_reused' : a.kind === 'output' ? 'I1_output_id_reused' : 'I1_dependency_reused';
        const what = a.kind === 'invocation' ? 'call_id' : a.kind === 'output' ? 'output_id' : 'dependency pair';
        rejected.push({ i, r: { code, message: `a different packet with this ${what} (${a.key}) already exists (I1)`, packetType: KIND_PACKET_TYPE[a.kind], ids: acceptedIds(a) } });
      }
      return true;
    };

    batch.forEach((p, i) => {
      const d = decodePacket(p, deps.maxPacketBytes);
      if (!d.ok) {
        rejected.push({ i, r: d.error });
        return;
      }
      const a = d.value;
      const inBatch = fresh[a.kind].get(a.key);
      if (inBatch && inBatch.a.row.fingerprint === a.row.fingerprint) {
        // Same packet twice in one batch: it shares the fate of its first copy (below).
        copies.push({ i, first: inBatch.i });
        return;
      }
      if (judge(i, a, inBatch?.a.row.fingerprint ?? cache.get(`${a.kind}:${a.key}`))) return;
      fresh[a.kind].set(a.key, { i, a });
    });

    // What the segments already hold decides between a redelivery and a conflicting reuse.
    const [invs, outs, deps_] = await Promise.all([
      fresh.invocation.size ? storedInvocations(ch, db, [...fresh.invocation.keys()]) : new Map<string, string>(),
      fresh.output.size ? storedOutputs(ch, db, [...fresh.output.keys()]) : new Map<string, string>(),
      fresh.dependency.size
        ? storedDependencies(ch, db, [...fresh.dependency.values()].map(({ a }) => a.row as { task_id: string; preceding_call_id: string }))
        : new Map<string, string>(),
    ]);
    const stored = { invocation: invs, output: outs, dependency: deps_ };
    for (const kind of ['invocation', 'output', 'dependency'] as const) {
      for (const [key, { i, a }] of fresh[kind]) {
        if (judge(i, a, stored[kind].get(key))) fresh[kind].delete(key);
      }
    }

    // A copy of a packet rejected above is rejected (and quarantined under its own source) too.
    const rejectedFirst = new Map(rejected.map(({ i, r }) => [i, r]));
    for (const { i, first } of copies) {
      const r = rejectedFirst.get(first);
      if (r) rejected.push({ i, r });
    }

    const toWrite = {
      invocation: [...fresh.invocation.values()],
      output: [...fresh.output.values()],
      dependency: [...fresh.dependency.values()],
    };
    const contents = await newContents(toWrite.output.map(({ a }) => a));
    const quarantine = await newQuarantine(rejected.map(({ i, r }) => quarantineRow(batch[i] as RawPacket, r)));

    // Every row of a segment is identified by its key; the key list seeds the insert token.
    await insert('tool_invocations', toWrite.invocation.map(({ a }) => ({ key: a.key, row: a.row })));
    await insert('tool_outputs', toWrite.output.map(({ a }) => ({ key: a.key, row: a.row })));
    await insert('output_contents', contents.map((c) => ({ key: `${c.content_hash}@${c.last_seen}`, row: c })));
    await insert('tool_workflows', toWrite.dependency.map(({ a }) => ({ key: a.key, row: a.row })));
    await insert('quarantine', quarantine.map((q) => ({ key: q.source_key, row: q })));

    for (const kind of ['invocation', 'output', 'dependency'] as const) {
      for (const { i, a } of toWrite[kind]) {
        cache.add(`${kind}:${a.key}`, a.row.fingerprint);
        outcomes[i] = { status: 'accepted', packetType: KIND_PACKET_TYPE[kind], ids: acceptedIds(a) };
        metrics.inc('tool_audit_ingest_rows_total', 'Rows written to segments', { segment: KIND_PACKET_TYPE[kind] });
      }
    }
    for (const { i, r } of rejected) {
      outcomes[i] = { status: 'rejected', packetType: r.packetType, ids: r.ids, reason: { code: r.code, message: r.message } };
      metrics.inc('tool_audit_quarantined_total', 'Packets quarantined, by reason', { reason: r.code });
    }
    for (const { i, first } of copies) {
      if (!outcomes[i]) outcomes[i] = { ...(outcomes[first] as PacketOutcome), status: 'duplicate' };
    }
    const dups = outcomes.filter((o) => o.status === 'duplicate').length;
    if (dups) metrics.inc('tool_audit_ingest_duplicates_total', 'Redelivered identical packets skipped (I1)', {}, dups);
    metrics.inc('tool_audit_ingest_packets_total', 'Packets processed by the ingest pipeline', {}, batch.length);
    return outcomes;
  }

  async function newContents(outputs: Accepted[]) {
    const byHash = new Map<string, Extract<Accepted, { kind: 'output' }>['content']>();
    for (const a of outputs) if (a.kind === 'output' && !byHash.has(a.content.content_hash)) byHash.set(a.content.content_hash, a.content);
    if (byHash.size === 0) return [];
    const seen = await storedContents(ch, db, [...byHash.keys()]);
    return [...byHash.values()].filter((c) => {
      const last = seen.get(c.content_hash);
      return last === undefined || Date.parse(`${c.last_seen}Z`) - last > CONTENT_REFRESH_MS;
    });
  }

  async function newQuarantine<T extends { source_key: string; source_kind: string }>(rowsIn: T[]): Promise<T[]> {
    // A poison record redelivered from the same Kafka offset is already quarantined.
    const kafkaKeys = rowsIn.filter((r) => r.source_kind === 'kafka').map((r) => r.source_key);
    const already = kafkaKeys.length ? await storedQuarantine(ch, db, kafkaKeys) : new Set<string>();
    const unique = new Map(rowsIn.filter((r) => !already.has(r.source_key)).map((r) => [r.source_key, r]));
    return [...unique.values()];
  }

  async function insert(table: string, keyed: Array<{ key: string; row: object }>): Promise<void> {
    if (keyed.length === 0) return;
    // The token makes a retried insert of the same rows a no-op inside ClickHouse's dedup window;
    // the key look-ups above cover retries beyond it and redeliveries in other batches.
    const token = createHash('sha256').update(table).update(keyed.map((k) => k.key).sort().join('\n')).digest('hex');
    try {
      await ch.insert({
        table: `${db}.${table}`,
        values: keyed.map((k) => k.row),
        format: 'JSONEachRow',
        clickhouse_settings: { insert_deduplication_token: token, date_time_input_format: 'best_effort' },
      });
    } catch (err) {
      throw new AppError('CLICKHOUSE_UNAVAILABLE', `insert into ${table} failed: ${(err as Error).message}`, { retryable: true, cause: err });
    }
  }

  return {
    write(batch) {
      const run = queue.then(() => writeNow(batch));
      queue = run.catch(() => undefined);
      return run;
    },
  };
}

