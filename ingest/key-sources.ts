/**
 * Where the key index reads stored keys: the segments holding each kind of key, the statements
 * that hash them inside ClickHouse (only 16 hex characters per key travel) and count them, and
 * when a snapshot of the filter cannot stand for them; where another writer's key log is first
 * read from. Pure: statements and rules, no I/O.
 */
import { KEY_KIND_LETTER, type KeyKind } from './key-hash.ts';
import type { KeySnapshotHeader } from './key-snapshot.ts';

/** Two 32-bit hashes as 16 hex characters, as the filter reads them. */
export const hexPair = (h1: string, h2: string) => `concat(hex(reinterpretAsFixedString(${h1})), hex(reinterpretAsFixedString(${h2})))`;
/** ClickHouse's two hashes of a key of a kind (key-hash.ts's keyHashes), as a hex pair. */
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
export const SOURCES: Array<{ kind: KeyKind; table: string; key: string; where: string; stored: string }> = [
  { kind: 'invocation', table: 'tool_invocations', key: 'toString(call_id)', where: '1', stored: 'ingested_at' },
  { kind: 'output', table: 'tool_outputs', key: 'toString(output_id)', where: '1', stored: 'ingested_at' },
  { kind: 'quarantine', table: 'quarantine', key: 'source_key', where: "source_kind = 'kafka'", stored: 'received_at' },
  // Only emitted dependencies are judged by I1 (the analyzer's are its own).
  { kind: 'dependency', table: 'tool_workflows', key: "concat(toString(preceding_call_id), '>', toString(succeeding_call_id))", where: "origin = 'emitted'", stored: 'ingested_at' },
  // A snapshot taken before model turns existed counts none: every turn is then read as stored since.
  { kind: 'turn', table: 'model_turns', key: 'toString(turn_id)', where: '1', stored: 'ingested_at' },
  // Likewise agent runs (migration 046).
  { kind: 'run', table: 'agent_runs', key: 'toString(run_id)', where: '1', stored: 'ingested_at' },
];
// Rows stored after {since} (the column is set by ClickHouse at insert: DEFAULT now64); epoch 0 = all.
const storedSince = (s: (typeof SOURCES)[number]) => `${s.where} AND ${s.stored} > fromUnixTimestamp64Milli({since:Int64}, 'UTC')`;
/** The hex pairs of one chunk of a source's keys stored after {since}. */
export const chunkSql = (s: (typeof SOURCES)[number]) =>
  `SELECT arrayStringConcat(groupArray(${keyPair(s.kind, 'k')})) AS h
   FROM (SELECT ${s.key} AS k FROM {db:Identifier}.${s.table} WHERE ${storedSince(s)} AND cityHash64(k) % {chunks:UInt64} = {chunk:UInt64})`;

const totals = SOURCES.map((s) => `(SELECT count() FROM {db:Identifier}.${s.table} WHERE ${s.where}) AS ${s.kind}`).join(', ');
/** Rows of each source in all, and stored after {since}; the server's time; the database's identity. */
export const COUNT = `SELECT ${totals}, ${SOURCES.map((s) => `(SELECT count() FROM {db:Identifier}.${s.table} WHERE ${storedSince(s)}) AS ${s.kind}_since`).join(', ')},
  toString(now64(3)) AS now, (SELECT toString(uuid) FROM system.databases WHERE name = {db:String}) AS db_uuid`;
/** Rows of each source in all (what a snapshot records): not counted twice as COUNT with since 0 would. */
export const COUNT_ALL = `SELECT ${totals}`;
/** What COUNT answers. */
export type Counts = Record<KeyKind | `${KeyKind}_since`, string> & { now: string; db_uuid: string };

/**
 * Why a snapshot cannot stand for the stored keys, or undefined when it can: another database,
 * or rows stored since it that the catch-up would not read (more new rows than rows stored after
 * its time: a restore or a backfill that wrote old `ingested_at` values).
 */
export function unusable(h: KeySnapshotHeader, c: Counts, database: string): string | undefined {
  if (h.database !== database || h.databaseUuid !== c.db_uuid) return `it is of another database (${h.database} ${h.databaseUuid})`;
  for (const s of SOURCES) {
    const added = Number(c[s.kind]) - (h.counts[s.kind] ?? 0);
    if (added > Number(c[`${s.kind}_since`])) return `${added} ${s.table} rows came after it, only ${c[`${s.kind}_since`]} of them stored since it was taken`;
  }
  return undefined;
}

/** Clock slack of the first read of a writer started elsewhere. */
const FIRST_READ_SLACK_MS = 60_000;

/** Where the log of a writer not read before is read from: the load saw everything before it. */
export function firstReadFrom(loadedAt: string): string {
  const ms = Date.parse(`${loadedAt.replace(' ', 'T')}Z`) - FIRST_READ_SLACK_MS;
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}
