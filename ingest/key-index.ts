/**
 * What a writer knows of the keys stored by everyone, so that a write round asks ClickHouse only
 * about keys it cannot rule out (issue 16). A Bloom filter (key-filter.ts) holds:
 *  - every stored key, read from the segments when the index loads: ClickHouse hashes them, so
 *    16 hex characters per key travel;
 *  - every key this writer is about to write, added and logged to `ingest_key_log` BEFORE the
 *    segment inserts (a crash in between leaves a false "maybe", which the exact look-up settles);
 *  - every key other writers logged since: each round first reads the other writers' log rows
 *    after the last (written_at, seq) seen of each. A writer inserts one round at a time, so its
 *    written_at grows with seq and nothing it logged is skipped.
 * A "maybe" (a stored key, or a false positive) goes to the exact look-up of segment-lookups.ts.
 * The look-up cost of a round thus follows the keys that may be stored, not the table sizes.
 */
import { randomUUID } from 'node:crypto';
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { KEY_KIND_LETTER, KeyFilter, keyHashes, type KeyKind } from './key-filter.ts';

/** Dependencies of {@link createKeyIndex}. */
export interface KeyIndexDeps {
  clickhouse: ClickHouseDoor;
  /** Upper bound of the filter's memory (INGEST_KEY_FILTER_MB). */
  maxBytes: number;
  metrics: MetricsRegistry;
  logger?: Logger;
  /** Keys read per statement while loading; default 2,000,000 (~32 MB of hex per chunk). */
  chunkKeys?: number;
}

/** A writer's view of every stored key. */
export interface KeyIndex {
  /** This writer's id in `ingest_key_log`. */
  readonly writer: string;
  /** Loads the filter once (later calls wait for the same load; a failed load is retried). */
  ready(): Promise<void>;
  /** Adds what other writers logged since the last refresh. */
  refresh(): Promise<void>;
  /** False when the key is certainly not stored. */
  mayHave(kind: KeyKind, key: string): boolean;
  /** Adds keys about to be written and logs them for other writers; resolves when logged. */
  log(keys: ReadonlyArray<readonly [KeyKind, string]>): Promise<void>;
}

/** Creates the key index of one writer. */
export function createKeyIndex(deps: KeyIndexDeps): KeyIndex {
  return new BloomKeyIndex(deps);
}

const hexPair = (h1: string, h2: string) => `concat(hex(reinterpretAsFixedString(${h1})), hex(reinterpretAsFixedString(${h2})))`;
const keyPair = (kind: KeyKind, key: string) => {
  const l = KEY_KIND_LETTER[kind];
  return hexPair(`murmurHash3_32(concat('${l}', ${key}))`, `murmurHash3_32(concat(${key}, '${l}'))`);
};

/**
 * The stored keys of each kind, read from the segments themselves — not from the key tables:
 * those are filled by materialized views, and a process killed between a segment's insert and
 * its view's could leave a stored key out of them. Read in chunks by a hash of the key (each
 * chunk scans the key column once), at most ~2 M keys a chunk.
 */
const SOURCES: Array<{ kind: KeyKind; table: string; key: string; where: string }> = [
  { kind: 'invocation', table: 'tool_invocations', key: 'toString(call_id)', where: '1' },
  { kind: 'output', table: 'tool_outputs', key: 'toString(output_id)', where: '1' },
  { kind: 'quarantine', table: 'quarantine', key: 'source_key', where: "source_kind = 'kafka'" },
  // Only emitted dependencies are judged by I1 (the analyzer's are its own).
  { kind: 'dependency', table: 'tool_workflows', key: "concat(toString(preceding_call_id), '>', toString(succeeding_call_id))", where: "origin = 'emitted'" },
];
const chunkSql = (s: (typeof SOURCES)[number]) =>
  `SELECT arrayStringConcat(groupArray(${keyPair(s.kind, 'k')})) AS h
   FROM (SELECT ${s.key} AS k FROM {db:Identifier}.${s.table} WHERE ${s.where} AND cityHash64(k) % {chunks:UInt64} = {chunk:UInt64})`;

const COUNT = `SELECT ${SOURCES.map((s) => `(SELECT count() FROM {db:Identifier}.${s.table} WHERE ${s.where}) AS ${s.kind}`).join(', ')}, toString(now64(3)) AS now`;

/** Hash pairs remembered between a round's questions and its log, per kind (a bound, not a need). */
const MAX_ASKED = 1_000_000;
/** Minimum capacity: a new database still takes millions of keys without filling the filter. */
const MIN_CAPACITY = 4_000_000;
/** Clock slack of the first read of a writer started elsewhere. */
const FIRST_READ_SLACK_MS = 60_000;

class BloomKeyIndex implements KeyIndex {
  readonly writer = randomUUID();
  private filter: KeyFilter | undefined;
  private loading: Promise<void> | undefined;
  /** Server time when the load began: rows logged before it were stored before the load read them. */
  private loadedAt = '';
  /** Other writers → the last (written_at, seq) read of their log. */
  private readonly seen = new Map<string, { at: string; seq: number }>();
  private seq = 0;
  /** Hash pairs of the keys asked about since the last log(): a round asks, then logs, the same keys. */
  private readonly asked: Record<KeyKind, Map<string, readonly [number, number]>> = { invocation: new Map(), output: new Map(), dependency: new Map(), quarantine: new Map() };

  constructor(private readonly deps: KeyIndexDeps) {}

  ready(): Promise<void> {
    this.loading ??= this.load().catch((err: unknown) => {
      this.loading = undefined;
      throw err;
    });
    return this.loading;
  }

  private async load(): Promise<void> {
    const ch = this.deps.clickhouse;
    const started = performance.now();
    await ch.insertRows('ingest_writers', [{ key: this.writer, row: { writer: this.writer } }]);
    const [c] = await ch.select<Record<KeyKind, string> & { now: string }>(COUNT);
    this.loadedAt = c?.now ?? '1970-01-01 00:00:00.000';
    const total = SOURCES.reduce((n, s) => n + Number(c?.[s.kind] ?? 0), 0);
    const filter = new KeyFilter(Math.max(total * 2, MIN_CAPACITY), this.deps.maxBytes);
    const perChunk = this.deps.chunkKeys ?? 2_000_000;
    let keys = 0;
    for (const s of SOURCES) {
      const chunks = Math.max(1, Math.ceil(Number(c?.[s.kind] ?? 0) / perChunk));
      for (let chunk = 0; chunk < chunks; chunk++) {
        const [r] = await ch.select<{ h: string }>(chunkSql(s), { chunks, chunk });
        keys += filter.addPairs(Buffer.from(r?.h ?? '', 'hex'));
      }
    }
    this.filter = filter;
    this.gauges();
    const seconds = (performance.now() - started) / 1000;
    this.deps.metrics.set('tool_audit_ingest_key_filter_load_seconds', 'Time the last key filter load took', seconds);
    this.deps.logger?.info({ keys, bytes: filter.bytes, seconds: Math.round(seconds * 100) / 100, fpr: filter.falsePositiveRate() }, 'ingest key filter loaded');
  }

  private gauges(): void {
    const f = this.filter as KeyFilter;
    this.deps.metrics.set('tool_audit_ingest_key_filter_keys', 'Keys added to the ingest key filter', f.added);
    this.deps.metrics.set('tool_audit_ingest_key_filter_bytes', 'Memory of the ingest key filter', f.bytes);
    this.deps.metrics.set('tool_audit_ingest_key_filter_fpr', 'Expected false-positive rate of the ingest key filter', f.falsePositiveRate());
  }

  async refresh(): Promise<void> {
    const ch = this.deps.clickhouse;
    const others = await ch.select<{ writer: string }>('SELECT DISTINCT writer FROM {db:Identifier}.ingest_writers WHERE writer != {me:String}', { me: this.writer });
    if (others.length === 0) return;
    const params: Record<string, unknown> = {};
    const conds = others.map(({ writer }, i) => {
      const s = this.seen.get(writer) ?? { at: firstReadFrom(this.loadedAt), seq: 0 };
      Object.assign(params, { [`w${i}`]: writer, [`t${i}`]: s.at, [`s${i}`]: s.seq });
      return `(writer = {w${i}:String} AND written_at >= {t${i}:DateTime64(3, 'UTC')} AND seq > {s${i}:UInt64})`;
    });
    const rows = await ch.select<{ writer: string; last_at: string; last_seq: string; h: string }>(
      `SELECT writer, toString(max(written_at)) AS last_at, max(seq) AS last_seq, arrayStringConcat(groupArray(${hexPair('h1', 'h2')})) AS h
       FROM {db:Identifier}.ingest_key_log WHERE ${conds.join(' OR ')} GROUP BY writer`,
      params,
    );
    for (const r of rows) {
      (this.filter as KeyFilter).addPairs(Buffer.from(r.h, 'hex'));
      this.seen.set(r.writer, { at: r.last_at, seq: Number(r.last_seq) });
    }
    if (rows.length) this.gauges();
  }

  mayHave(kind: KeyKind, key: string): boolean {
    const pair = keyHashes(kind, key);
    const asked = this.asked[kind];
    if (asked.size < MAX_ASKED) asked.set(key, pair);
    return (this.filter as KeyFilter).mayHave(pair[0], pair[1]);
  }

  async log(keys: ReadonlyArray<readonly [KeyKind, string]>): Promise<void> {
    if (keys.length === 0) return;
    const f = this.filter as KeyFilter;
    const seq = ++this.seq;
    const lines: string[] = new Array<string>(keys.length);
    keys.forEach(([kind, key], j) => {
      const [h1, h2] = this.asked[kind].get(key) ?? keyHashes(kind, key);
      f.add(h1, h2);
      lines[j] = `${this.writer}\t${seq}\t${h1}\t${h2}\n`;
    });
    for (const m of Object.values(this.asked)) m.clear();
    this.gauges();
    // One block per round, identified by writer and seq (a retry logs under a new seq).
    await this.deps.clickhouse.insertLines('ingest_key_log', ['writer', 'seq', 'h1', 'h2'], Buffer.from(lines.join('')), [`${this.writer}/${seq}`]);
  }
}

/** Where the log of a writer not read before is read from: the load saw everything before it. */
function firstReadFrom(loadedAt: string): string {
  const ms = Date.parse(`${loadedAt.replace(' ', 'T')}Z`) - FIRST_READ_SLACK_MS;
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}
