/**
 * What a writer knows of the keys stored by everyone, so that a write round asks ClickHouse only
 * about keys it cannot rule out. A Bloom filter (key-filter.ts) holds:
 *  - every stored key, read from the segments when the index loads: ClickHouse hashes them, so
 *    16 hex characters per key travel;
 *  - every key this writer is about to write, added and logged to `ingest_key_log` BEFORE the
 *    segment inserts (a crash in between leaves a false "maybe", which the exact look-up settles);
 *  - every key other writers logged since: each round first reads the other writers' log rows
 *    after the last (written_at, seq) seen of each. A writer inserts one round at a time, so its
 *    written_at grows with seq and nothing it logged is skipped.
 * A "maybe" (a stored key, or a false positive) goes to the exact look-up of segment-lookups.ts.
 * The look-up cost of a round thus follows the keys that may be stored, not the table sizes.
 * While the filter loads (a start without a snapshot reads every stored key: tens of seconds at
 * tens of millions of calls) the writer does not wait: every key is a "maybe", so every key goes
 * to the exact look-up, and the keys it logs meanwhile are kept aside and added once the filter
 * exists (the load's scan may have passed them already).
 */
import { randomUUID } from 'node:crypto';
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { GrowingKeyFilter } from './key-filter.ts';
import { keyHashes, type KeyKind } from './key-hash.ts';
import { chunkSql, COUNT, COUNT_ALL, firstReadFrom, hexPair, SOURCES, unusable, type Counts } from './key-sources.ts';
import { KEY_SNAPSHOT_VERSION, readKeySnapshot, writeKeySnapshot } from './key-snapshot.ts';
import { AppError } from '../platform/errors.ts';

/** Dependencies of {@link createKeyIndex}. */
export interface KeyIndexDeps {
  clickhouse: ClickHouseDoor;
  /** Upper bound of the filter's memory (INGEST_KEY_FILTER_MB). */
  maxBytes: number;
  metrics: MetricsRegistry;
  logger?: Logger;
  /** Keys read per statement while loading; default 2,000,000 (~32 MB of hex per chunk). */
  chunkKeys?: number;
  /** Where the filter's snapshot lives (key-snapshot.ts); absent: no snapshot, every start reads every key. */
  snapshotPath?: string;
  /** How often a loaded filter is written to its snapshot; 0: only after a load and at close. */
  snapshotEveryMs?: number;
  /** How far before a snapshot's coverage time the catch-up reads; default {@link SNAPSHOT_SLACK_MS}. */
  snapshotSlackMs?: number;
  /** Clock (epoch ms), for tests. */
  now?: () => number;
}

/** Where the filter stands: what /readyz tells while a writer starts. */
export interface KeyIndexProgress {
  state: 'idle' | 'loading' | 'ready';
  /** Where the keys come from: a snapshot and the rows since it, or every stored key. */
  source?: 'snapshot' | 'segments';
  keys: number;
  /** Keys the load reads in all (known once it has counted them). */
  of?: number;
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
  /** How the load is going. */
  progress(): KeyIndexProgress;
  /** Writes the snapshot now (when there is a path and a loaded filter); the bytes written, 0 for none. */
  snapshot(): Promise<number>;
  /** Stops the periodic snapshots and writes a last one. */
  close(): Promise<void>;
}

/** Creates the key index of one writer. */
export function createKeyIndex(deps: KeyIndexDeps): KeyIndex {
  return new BloomKeyIndex(deps);
}

/** Hash pairs remembered between a round's questions and its log, per kind (a bound, not a need). */
const MAX_ASKED = 1_000_000;
/** Minimum capacity: a new database still takes millions of keys without filling the filter. */
const MIN_CAPACITY = 4_000_000;
/**
 * How far before a snapshot's `coveredAt` the catch-up reads: an insert's rows carry the time
 * it began (ClickHouse's clock), and the writer's clock may differ from ClickHouse's.
 */
const SNAPSHOT_SLACK_MS = 600_000;

class BloomKeyIndex implements KeyIndex {
  readonly writer = randomUUID();
  private filter: GrowingKeyFilter | undefined;
  private loading: Promise<void> | undefined;
  private progressNow: KeyIndexProgress = { state: 'idle', keys: 0 };
  /** Server time when the load began: rows logged before it were stored before the load read them. */
  private loadedAt = '';
  /** The database's identity, for the snapshot. */
  private dbUuid = '';
  /** Writer's clock when the keys of others were last read: everything stored before it is in the filter. */
  private coveredAt = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Set by close(): a load in progress ends after its current statement. */
  private closing = false;
  /** The snapshot being written, or the last one. */
  private writing: Promise<number> | undefined;
  /** Other writers → the last (written_at, seq) read of their log. */
  private readonly seen = new Map<string, { at: string; seq: number }>();
  private seq = 0;
  /** Hash pairs (h1, h2, h1, h2, …) this writer logged while the filter loaded, added to it when it is built. */
  private pending: number[] = [];
  /** Hash pairs of the keys asked about since the last log(): a round asks, then logs, the same keys. */
  private readonly asked: Record<KeyKind, Map<string, readonly [number, number]>> = { invocation: new Map(), output: new Map(), dependency: new Map(), quarantine: new Map(), turn: new Map(), run: new Map() };
  private readonly now: () => number;

  constructor(private readonly deps: KeyIndexDeps) {
    this.now = deps.now ?? Date.now;
  }

  ready(): Promise<void> {
    // After close() nothing may reach the engine, which is about to close.
    if (this.closing) return this.loading?.catch(() => undefined) ?? Promise.resolve();
    this.loading ??= this.load().catch((err: unknown) => {
      this.loading = undefined;
      this.progressNow = { state: 'idle', keys: 0 };
      throw err;
    });
    return this.loading;
  }

  progress(): KeyIndexProgress {
    return { ...this.progressNow, keys: this.filter?.added ?? this.progressNow.keys };
  }

  private async load(): Promise<void> {
    // The bulk reads of the load go to the background lane (ingest's rounds look keys up exactly
    // meanwhile and must not wait for it); the writer row and the counts are quick.
    const ch = this.deps.clickhouse;
    const bulk = ch.lane('job');
    const started = performance.now();
    this.progressNow = { state: 'loading', keys: 0 };
    await ch.insertRows('ingest_writers', [{ key: this.writer, row: { writer: this.writer } }]);
    // Taken before anything is read: whatever is stored after it is read by the next start's catch-up.
    const coveredAt = this.now();
    const snap = this.deps.snapshotPath ? await readKeySnapshot(this.deps.snapshotPath) : ({ ok: false, why: 'no snapshot path' } as const);
    const since = snap.ok ? Math.max(0, snap.header.coveredAt - (this.deps.snapshotSlackMs ?? SNAPSHOT_SLACK_MS)) : 0;
    const [c] = await ch.select<Counts>(COUNT, { since });
    if (!c) throw new AppError('CLICKHOUSE_QUERY_FAILED', 'the key count returned no row', { retryable: true });
    this.loadedAt = c.now;
    this.dbUuid = c.db_uuid;
    const why = snap.ok ? unusable(snap.header, c, ch.database) : snap.why;
    const from = why === undefined && snap.ok ? snap.filter : undefined;
    const total = SOURCES.reduce((n, s) => n + Number(from ? c[`${s.kind}_since`] : c[s.kind]), 0);
    const filter = from ?? new GrowingKeyFilter(Math.max(total * 2, MIN_CAPACITY), this.deps.maxBytes);
    this.progressNow = { state: 'loading', source: from ? 'snapshot' : 'segments', keys: 0, of: total };
    if (why !== undefined && this.deps.snapshotPath) this.deps.logger?.info({ why }, 'key filter snapshot not used: reading every stored key');
    const perChunk = this.deps.chunkKeys ?? 2_000_000;
    let keys = 0;
    for (const s of SOURCES) {
      const rows = Number(from ? c[`${s.kind}_since`] : c[s.kind]);
      const chunks = Math.max(1, Math.ceil(rows / perChunk));
      for (let chunk = 0; chunk < chunks && rows > 0; chunk++) {
        if (this.closing) {
          // Unfinished, so no filter: nothing reads it once the process is stopping.
          this.progressNow = { state: 'idle', keys: 0 };
          return;
        }
        const [r] = await bulk.select<{ h: string }>(chunkSql(s), { chunks, chunk, since: from ? since : 0 });
        keys += filter.addPairs(Buffer.from(r?.h ?? '', 'hex'));
        this.progressNow.keys = keys;
      }
    }
    // Synchronous from here to the assignment: no round logs a key between the two.
    for (let i = 0; i < this.pending.length; i += 2) filter.add(this.pending[i] as number, this.pending[i + 1] as number);
    this.pending = [];
    this.filter = filter;
    this.coveredAt = coveredAt;
    this.progressNow = { state: 'ready', source: from ? 'snapshot' : 'segments', keys: filter.added, of: total };
    this.gauges();
    const seconds = (performance.now() - started) / 1000;
    this.deps.metrics.set('tool_audit_ingest_key_filter_load_seconds', 'Time the last key filter load took', seconds);
    this.deps.logger?.info({ source: this.progressNow.source, read: keys, keys: filter.added, bytes: filter.bytes, seconds: Math.round(seconds * 100) / 100, fpr: filter.falsePositiveRate() }, 'ingest key filter loaded');
    // A full read is worth keeping at once: the next start reads only what came after it.
    if (!from) void this.snapshot().catch(() => undefined);
    const every = this.deps.snapshotEveryMs ?? 0;
    if (this.deps.snapshotPath && every > 0) {
      this.timer = setInterval(() => void this.snapshot().catch(() => undefined), every);
      this.timer.unref();
    }
  }

  snapshot(): Promise<number> {
    // One at a time, each after the one before: a snapshot asked for while one is being written
    // (the one after the load, when close() comes) covers what was added since.
    const next = (this.writing ?? Promise.resolve(0)).catch(() => 0).then(() => this.writeSnapshot());
    this.writing = next;
    return next;
  }

  private async writeSnapshot(): Promise<number> {
    const path = this.deps.snapshotPath;
    const filter = this.filter;
    if (!path || !filter) return 0;
    const started = performance.now();
    try {
      // Read the other writers' keys first: the snapshot then covers up to now, and the next start catches up less.
      await this.refresh();
      // Taken before the bits are written: a bit only turns on, so the file holds every key covered by then.
      const header = { version: KEY_SNAPSHOT_VERSION, database: this.deps.clickhouse.database, databaseUuid: this.dbUuid, coveredAt: this.coveredAt, counts: {} as Record<string, number>, sliceMaxBytes: this.deps.maxBytes };
      const [c] = await this.deps.clickhouse.select<Record<KeyKind, string>>(COUNT_ALL, {});
      for (const s of SOURCES) header.counts[s.kind] = Number(c?.[s.kind] ?? 0);
      const bytes = await writeKeySnapshot(path, header, filter);
      this.deps.metrics.set('tool_audit_ingest_key_snapshot_seconds', 'Time the last key filter snapshot took to write', (performance.now() - started) / 1000);
      this.deps.logger?.debug({ path, bytes }, 'key filter snapshot written');
      return bytes;
    } catch (err) {
      this.deps.logger?.warn({ path, err: (err as Error).message }, 'key filter snapshot not written; the next start reads every key');
      throw err;
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    // A load still reading keys ends after its current statement, and the engine must not close
    // under that statement: stopping serve two minutes into a cold 30 M-call start (the load
    // reading every stored key) ended the process with SIGSEGV when the door closed beneath it.
    await this.loading?.catch(() => undefined);
    await this.snapshot().catch(() => undefined);
  }

  private gauges(): void {
    const f = this.filter;
    if (!f) return;
    this.deps.metrics.set('tool_audit_ingest_key_filter_keys', 'Keys added to the ingest key filter', f.added);
    this.deps.metrics.set('tool_audit_ingest_key_filter_bytes', 'Memory of the ingest key filter', f.bytes);
    this.deps.metrics.set('tool_audit_ingest_key_filter_slices', 'Slices of the ingest key filter (it grows by a slice when full)', f.parts.length);
    this.deps.metrics.set('tool_audit_ingest_key_filter_fpr', 'Expected false-positive rate of the ingest key filter', f.falsePositiveRate());
  }

  async refresh(): Promise<void> {
    // Before the filter exists there is nothing to add to: the load's first refresh reads the
    // other writers' log from before the load began (firstReadFrom).
    if (!this.filter) return;
    const ch = this.deps.clickhouse;
    const startedAt = this.now();
    const others = await ch.select<{ writer: string }>('SELECT DISTINCT writer FROM {db:Identifier}.ingest_writers WHERE writer != {me:String}', { me: this.writer });
    if (others.length === 0) {
      this.coveredAt = startedAt;
      return;
    }
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
      (this.filter as GrowingKeyFilter).addPairs(Buffer.from(r.h, 'hex'));
      this.seen.set(r.writer, { at: r.last_at, seq: Number(r.last_seq) });
    }
    this.coveredAt = startedAt;
    if (rows.length) this.gauges();
  }

  mayHave(kind: KeyKind, key: string): boolean {
    const pair = keyHashes(kind, key);
    const asked = this.asked[kind];
    if (asked.size < MAX_ASKED) asked.set(key, pair);
    // While the filter loads, every key may be stored: the exact look-up decides.
    return this.filter ? this.filter.mayHave(pair[0], pair[1]) : true;
  }

  async log(keys: ReadonlyArray<readonly [KeyKind, string]>): Promise<void> {
    if (keys.length === 0) return;
    const f = this.filter;
    const seq = ++this.seq;
    const lines: string[] = new Array<string>(keys.length);
    keys.forEach(([kind, key], j) => {
      const [h1, h2] = this.asked[kind].get(key) ?? keyHashes(kind, key);
      if (f) f.add(h1, h2);
      else this.pending.push(h1, h2);
      lines[j] = `${this.writer}\t${seq}\t${h1}\t${h2}\n`;
    });
    for (const m of Object.values(this.asked)) m.clear();
    this.gauges();
    // One block per round, identified by writer and seq (a retry logs under a new seq).
    await this.deps.clickhouse.insertLines('ingest_key_log', ['writer', 'seq', 'h1', 'h2'], Buffer.from(lines.join('')), [`${this.writer}/${seq}`]);
  }
}
