/**
 * One commit round against ClickHouse: look up the keys the verdict (verdict.ts) cannot settle
 * from memory, judge, then insert the new rows, their contents and the quarantine records. A
 * round resolves only when all of it is durable; on a fault it throws a retryable AppError and
 * the same round may be written again, safely (key look-ups and insert tokens).
 */
import { type ClickHouseDoor, type KeyedRow } from '../platform/clickhouse/door.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { ContentSeen, DedupCache } from './dedup-cache.ts';
import { FifoMap } from './fifo-map.ts';
import type { KeyKind } from './key-hash.ts';
import type { Redactor } from '../schemas/redaction-policy.ts';
import type { KeyIndex } from './key-index.ts';
import { joinParts, joinWithField, type BodyPart } from './line-join.ts';
import type { CallsStoredListener, PacketOutcome } from './ports.ts';
import { KIND_PACKET_TYPE, quarantineRow, replayRow, sourceKey, type RejectCode, type Rejection } from './rows.ts';
import { CONTENT_COLUMNS, SEGMENT_COLUMNS, STAMPED_OUTPUT_COLUMNS } from './row-lines.ts';
import { storedHints, storedRuns, storedTurns } from './hint-lookups.ts';
import { QUARANTINE_COLUMNS, quarantineBody, type QuarantineInsert } from './quarantine-body.ts';
import { storedDependencies, storedInvocations, storedOutputs, storedQuarantine } from './segment-lookups.ts';
import { kafkaKeys, RoundIndex, type RoundBatch } from './round-index.ts';
import { storedCosts } from './stored-costs.ts';
import { conflictReason, judgeRound, judgeStored, KINDS, type Kind, type RoundVerdict } from './verdict.ts';

export type { RoundBatch } from './round-index.ts';

/** What a committer needs. */
export interface RoundCommitterDeps {
  clickhouse: ClickHouseDoor;
  metrics: MetricsRegistry;
  dedupCacheEntries: number;
  /** Calls whose task is remembered to stamp their outputs. */
  callTaskEntries: number;
  /** Told of the calls and model turns each round wrote (budgets); absent = nothing is parsed back. */
  onCallsStored?: CallsStoredListener;
  /** What is stored, as far as a filter can tell: only keys it cannot rule out are looked up. */
  keyIndex: KeyIndex;
  /** Secrets out of quarantined packets too (their raw text is stored). */
  redactor?: Redactor | undefined;
}

const CONTENT_REFRESH_MS = 24 * 3600 * 1000;

/** Creates the commit step of a segment writer; its memory (dedup cache, contents, call tasks) lives as long as it does. */
export function createRoundCommitter(deps: RoundCommitterDeps): (round: readonly RoundBatch[]) => Promise<PacketOutcome[][]> {
  const committer = new RoundCommitter(deps);
  return (round) => committer.commit(round);
}

class RoundCommitter {
  private readonly cache: DedupCache;
  private readonly contentSeen: ContentSeen;
  /**
   * call_id → task_id of calls this writer saw: output packets carry no task_id, and the emitter
   * sends a call and then its output under the same Kafka key, so both reach this writer in order.
   */
  private readonly callTasks: FifoMap<string>;

  constructor(private readonly deps: RoundCommitterDeps) {
    this.cache = new DedupCache(deps.dedupCacheEntries);
    this.contentSeen = new ContentSeen(deps.dedupCacheEntries);
    this.callTasks = new FifoMap<string>(deps.callTaskEntries);
  }

  private stageSeconds(stage: 'lookup' | 'insert', since: number): void {
    this.deps.metrics.inc('tool_audit_ingest_stage_seconds_total', 'Wall time spent per ingest stage', { stage }, (performance.now() - since) / 1000);
  }

  /** What the segments already hold decides between a redelivery and a conflicting reuse. */
  private async lookUp(r: RoundIndex, v: RoundVerdict): Promise<Set<string>> {
    const started = performance.now();
    const index = this.deps.keyIndex;
    await index.refresh();
    // Keys the filter rules out are new; only the others are asked of ClickHouse.
    const maybe = (kind: KeyKind, keys: Iterable<string>) => [...keys].filter((k) => index.mayHave(kind, k));
    const depKeys = maybe('dependency', v.fresh.dependency.keys());
    const invKeys = maybe('invocation', v.fresh.invocation.keys());
    const outKeys = maybe('output', v.fresh.output.keys());
    const turnKeys = maybe('turn', v.fresh.turn.keys());
    const runKeys = maybe('run', v.fresh.run.keys());
    const decodeRejected = maybe('quarantine', kafkaKeys(r, v.rejected));
    const judged = v.fresh.invocation.size + v.fresh.output.size + v.fresh.dependency.size + v.fresh.turn.size + v.fresh.run.size;
    const asked = invKeys.length + outKeys.length + depKeys.length + turnKeys.length + runKeys.length;
    const help = 'Keys judged by ingest, by whether ClickHouse was asked';
    this.deps.metrics.inc('tool_audit_ingest_key_lookups_total', help, { asked: 'no' }, judged - asked);
    this.deps.metrics.inc('tool_audit_ingest_key_lookups_total', help, { asked: 'yes' }, asked);
    const depPairs = depKeys.map((k) => {
      const i = v.fresh.dependency.get(k) as number;
      return { task_id: r.col(i).taskId(r.at(i)), preceding_call_id: k.slice(0, 36) };
    });
    // Hints (few: from the analyzer or producers) are always looked up.
    const [invocation, output, dependency, quarantined, hint, turn, run] = await Promise.all([
      invKeys.length ? storedInvocations(this.deps.clickhouse, invKeys) : new Map<string, string>(),
      outKeys.length ? storedOutputs(this.deps.clickhouse, outKeys) : new Map<string, string>(),
      depPairs.length ? storedDependencies(this.deps.clickhouse, depPairs) : new Map<string, string>(),
      decodeRejected.length ? storedQuarantine(this.deps.clickhouse, decodeRejected) : new Set<string>(),
      v.fresh.hint.size ? storedHints(this.deps.clickhouse, [...v.fresh.hint.keys()]) : new Map<string, string>(),
      turnKeys.length ? storedTurns(this.deps.clickhouse, turnKeys) : new Map<string, string>(),
      runKeys.length ? storedRuns(this.deps.clickhouse, runKeys) : new Map<string, string>(),
    ]);
    judgeStored(v, r, { invocation, output, dependency, hint, turn, run });
    // A poison record redelivered from the same Kafka offset is already quarantined. Keys of
    // packets rejected only now (I1 and their copies) are looked up here.
    const late = maybe('quarantine', kafkaKeys(r, v.rejected.slice(v.judgedFirst)));
    if (late.length) for (const k of await storedQuarantine(this.deps.clickhouse, late)) quarantined.add(k);
    this.stageSeconds('lookup', started);
    return quarantined;
  }

  /** Output contents to write: once per hash, and again when last seen more than a day ago. */
  private contentsToWrite(r: RoundIndex, v: RoundVerdict): Map<string, { key: string; part: BodyPart; ms: number }> {
    // What this process wrote is remembered; a hash first seen here is written even if another
    // process (or an earlier run) wrote it: ReplacingMergeTree(last_seen) keeps one row per hash.
    // (Asking ClickHouse first costs a scan of every stored hash per round, growing with the table.)
    const contents = new Map<string, { key: string; part: BodyPart; ms: number }>();
    for (const i of v.fresh.output.values()) {
      const hash = r.col(i).contentHash(r.at(i));
      if (contents.has(hash)) continue;
      const lastSeen = r.col(i).lastSeen(r.at(i));
      const ms = Date.parse(`${lastSeen}Z`);
      const last = this.contentSeen.get(hash);
      if (last === undefined || ms - last > CONTENT_REFRESH_MS) contents.set(hash, { key: `${hash}@${lastSeen}`, part: r.part(i, 'content'), ms });
    }
    return contents;
  }

  /** The tasks of the round's calls that are written or already stored (an identical redelivery). */
  private roundTasks(r: RoundIndex, v: RoundVerdict): Map<string, string> {
    const tasks = new Map<string, string>();
    for (let i = 0; i < r.size; i++) {
      if (r.kindOf(i) !== 'invocation') continue;
      if (v.fresh.invocation.get(r.key(i)) === i || v.duplicates.has(i)) tasks.set(r.key(i), r.col(i).taskId(r.at(i)));
    }
    return tasks;
  }

  private async insertAll(r: RoundIndex, v: RoundVerdict, quarantine: Map<string, QuarantineInsert>, tasks: Map<string, string>, replays: KeyedRow[]): Promise<Map<string, { ms: number }>> {
    const contents = this.contentsToWrite(r, v);
    // The task of each output's call: a call of this round, else one this writer saw recently
    // ('' = the call has no task), else null (unknown: the output becomes an orphan, migration 007).
    const outputTask = (key: string): string | null => {
      const i = v.fresh.output.get(key) as number;
      const call = r.col(i).callId(r.at(i));
      return tasks.get(call) ?? this.callTasks.get(call) ?? null;
    };
    const keyed = (kind: Kind) => [...v.fresh[kind]].map(([key, i]) => ({ key, part: r.part(i, kind) }));
    const lines = (table: string, columns: readonly string[], rows: Array<{ key: string; part: BodyPart }>, extra?: (key: string) => string | null) =>
      this.deps.clickhouse.insertLines(table, columns, extra ? joinWithField(rows, extra) : joinParts(rows.map((k) => k.part)), rows.map((k) => k.key));
    // A content goes in before the output rows that refer to it: if the round fails in between,
    // the retry finds the outputs missing and writes both again (an output found stored is never
    // rewritten, so the other order could lose its content).
    const started = performance.now();
    await Promise.all([
      lines('tool_invocations', SEGMENT_COLUMNS.tool_invocations, keyed('invocation')),
      lines('output_contents', CONTENT_COLUMNS, [...contents.values()]).then(() => lines('tool_outputs', STAMPED_OUTPUT_COLUMNS, keyed('output'), outputTask)),
      lines('tool_workflows', SEGMENT_COLUMNS.tool_workflows, keyed('dependency')),
      lines('workflow_optimizations', SEGMENT_COLUMNS.workflow_optimizations, keyed('hint')),
      lines('model_turns', SEGMENT_COLUMNS.model_turns, keyed('turn')),
      lines('agent_runs', SEGMENT_COLUMNS.agent_runs, keyed('run')),
      this.deps.clickhouse.insertLines('quarantine', QUARANTINE_COLUMNS, quarantineBody(quarantine.values()), [...quarantine.keys()]),
      this.deps.clickhouse.insertRows('quarantine_replays', replays),
    ]);
    this.stageSeconds('insert', started);
    return contents;
  }

  /** Counts the outcomes in the metrics; the writer's memory learns what was written. */
  private settle(r: RoundIndex, v: RoundVerdict, outcomes: readonly PacketOutcome[]): void {
    for (const kind of KINDS) {
      for (const [key, i] of v.fresh[kind]) this.cache.add(kind, key, r.fp(i));
      const n = v.fresh[kind].size;
      if (n) this.deps.metrics.inc('tool_audit_ingest_rows_total', 'Rows written to segments', { segment: KIND_PACKET_TYPE[kind] }, n);
    }
    // Counted per reason, then once per reason: a topic of rejects is one increment per code, not per packet.
    const byReason = new Map<string, number>();
    for (const x of v.rejected) {
      if (r.packet(x.i).replay) continue;
      const code = (outcomes[x.i] as PacketOutcome).reason?.code ?? '';
      byReason.set(code, (byReason.get(code) ?? 0) + 1);
    }
    for (const [reason, n] of byReason) this.deps.metrics.inc('tool_audit_quarantined_total', 'Packets quarantined, by reason', { reason }, n);
    const duplicates = v.duplicates.size + v.followers.length;
    if (duplicates) this.deps.metrics.inc('tool_audit_ingest_duplicates_total', 'Redelivered identical packets skipped (I1)', {}, duplicates);
    this.deps.metrics.inc('tool_audit_ingest_packets_total', 'Packets processed by the ingest pipeline', {}, r.size);
    this.deps.metrics.inc('tool_audit_ingest_commit_rounds_total', 'Commit rounds (look-ups + inserts) against ClickHouse');
  }

  /** Judges and writes one round; the outcomes per batch. */
  async commit(round: readonly RoundBatch[]): Promise<PacketOutcome[][]> {
    // The filter's load starts with the first round unless the process started it; rounds do not
    // wait for it (every key is looked up until it is loaded). A failed load is tried again by
    // the next round (or fails the start-up step that started it).
    this.deps.keyIndex.ready().catch(() => undefined);
    const r = new RoundIndex(round);
    const v = judgeRound(r, (kind, key, fp) => this.cache.get(kind, key, fp));
    const quarantined = await this.lookUp(r, v);
    const tasks = this.roundTasks(r, v);
    const outcomes = outcomesOf(r, v);
    const quarantine = quarantineRows(r, v, quarantined, outcomes, this.deps.redactor);
    // Logged before the inserts: other writers learn the keys even if this process dies midway.
    const logged: Array<readonly [KeyKind, string]> = [];
    // Hints are looked up in their table every time: the key index does not keep them.
    for (const kind of KINDS) if (kind !== 'hint') for (const key of v.fresh[kind].keys()) logged.push([kind, key]);
    for (const { row: q } of quarantine.values()) if (q.source_kind === 'kafka') logged.push(['quarantine', q.source_key]);
    await this.deps.keyIndex.log(logged);
    const contents = await this.insertAll(r, v, quarantine, tasks, replayRows(r, outcomes));
    for (const [hash, c] of contents) this.contentSeen.set(hash, c.ms);
    for (const [call, task] of tasks) this.callTasks.set(call, task);
    this.settle(r, v, outcomes);
    if (this.deps.onCallsStored && (v.fresh.invocation.size || v.fresh.turn.size)) this.deps.onCallsStored(storedCosts(r, v));
    const out: PacketOutcome[][] = [];
    let from = 0;
    for (const d of round) {
      out.push(outcomes.slice(from, from + d.batch.length));
      from += d.batch.length;
    }
    return out;
  }
}

/** The quarantine records of the round's rejected packets not quarantined before (`quarantined`: source keys already stored). */
function quarantineRows(r: RoundIndex, v: RoundVerdict, quarantined: Set<string>, outcomes: readonly PacketOutcome[], redactor: Redactor | undefined): Map<string, QuarantineInsert> {
  const quarantine = new Map<string, QuarantineInsert>();
  for (const x of v.rejected) {
    const p = r.packet(x.i);
    const key = sourceKey(p.source);
    // A replay that still fails is answered and recorded with the replay, not quarantined again.
    if (p.replay || quarantined.has(key)) continue;
    const o = outcomes[x.i] as PacketOutcome & { reason: { code: RejectCode; message: string } };
    const reason = { code: o.reason.code, message: o.reason.message, packetType: o.packetType, ids: o.ids };
    // Bytes that are not UTF-8 (kept as base64) are read as UTF-8 for the detectors, U+FFFD for
    // each invalid sequence: when they hold a secret, that text is kept, redacted, instead — the
    // exact bytes are lost, the secret is not stored.
    const encoding = p.encoding ?? 'utf8';
    if (redactor && (encoding === 'utf8' || encoding === 'base64')) {
      const text = encoding === 'base64' ? Buffer.from(p.raw, 'base64').toString('utf8') : p.rawBytes ? Buffer.from(p.rawBytes.buffer, p.rawBytes.byteOffset, p.rawBytes.length).toString('utf8') : p.raw;
      const red = redactor.packet(text);
      if (red !== text) {
        const kept = encoding === 'base64' ? { ...reason, message: `${reason.message}; kept as UTF-8 text (U+FFFD for the invalid bytes) with its secrets redacted` } : reason;
        quarantine.set(key, { row: { ...quarantineRow(p, kept, false), raw: red, raw_encoding: 'utf8' } });
        continue;
      }
    }
    const rawBytes = p.rawBytes;
    quarantine.set(key, { row: quarantineRow(p, reason, !rawBytes), rawBytes });
  }
  return quarantine;
}

/** What happened to each packet of a round (pure: nothing counted, nothing remembered). */
function outcomesOf(r: RoundIndex, v: RoundVerdict): PacketOutcome[] {
  const outcomes: PacketOutcome[] = new Array(r.size);
  for (const kind of KINDS) for (const [, i] of v.fresh[kind]) outcomes[i] = { status: 'accepted', packetType: KIND_PACKET_TYPE[kind], ids: r.ids(i) };
  for (const i of v.duplicates) outcomes[i] = { status: 'duplicate', packetType: KIND_PACKET_TYPE[r.kindOf(i) as Kind], ids: r.ids(i) };
  for (const x of v.rejected) {
    const j = rejection(r, x.i, x.conflict);
    outcomes[x.i] = { status: 'rejected', packetType: j.packetType, ids: j.ids, reason: { code: j.code, message: j.message } };
  }
  for (const { i, first } of v.followers) outcomes[i] = { ...(outcomes[first] as PacketOutcome), status: 'duplicate' };
  return outcomes;
}

/** The `quarantine_replays` rows of the round's replayed packets (written in the same round as their rows). */
function replayRows(r: RoundIndex, outcomes: readonly PacketOutcome[]): KeyedRow[] {
  const rows: KeyedRow[] = [];
  for (let i = 0; i < r.size; i++) {
    const row = replayRow(r.packet(i), outcomes[i] as PacketOutcome);
    if (row) rows.push({ key: `${row.replay_id}/${row.quarantine_id}`, row });
  }
  return rows;
}

/** Why a packet was rejected: the decoder's reason, or the I1 conflict. */
function rejection(r: RoundIndex, i: number, conflict: { kind: Kind; key: string } | undefined): Rejection {
  if (!conflict) return r.col(i).rejection(r.at(i)) as Rejection;
  return { ...conflictReason(conflict.kind, conflict.key), packetType: KIND_PACKET_TYPE[conflict.kind], ids: r.ids(i) };
}
