/**
 * The quarantine (GET /v1/quarantine, GET /v1/quarantine/{id}): packets that broke a MUST rule,
 * newest first, with their exact bytes, their reason and every replay of them
 * (`quarantine_replays`, migration 008). A quarantined packet's id is its `source_key`: unique
 * per Kafka record (topic/partition@offset) and per HTTP packet (request id#index).
 */
import { z } from 'zod';
import { cursorCodec, msKey, strKey } from './cursor.ts';
import type { QuarantineList, QuarantineRecord, QuarantineShow } from './quarantine-schemas.ts';
import { chTime, countsObject, isoTime, pageOf, PAGE_PARAM_DOCS, runQuery, windowParams, type QueryContext, type QuerySpec, type StatementRunner, type TimeWindow } from './sql.ts';

const FILTER_DOCS = {
  db: 'database of the segments (Identifier)',
  from: "inclusive lower bound of received_at, 'YYYY-MM-DD hh:mm:ss.sss' UTC",
  to: 'exclusive upper bound of received_at, same format',
  reason: "only this reason code (e.g. 'I5_args_hash'); '' for every reason",
  source: "only packets whose quarantine_id starts with this (e.g. 'kafka', 'http', 'kafka:tool_audit.packets/3') or whose HTTP request id is this; '' for all",
  packet_type: "only this packet type ('tool_call', 'output_artifact', 'tool_dependency', 'optimization_hint', 'model_turn', 'agent_run'); '' for all",
};

const FILTER = `received_at >= {from:DateTime64(3, 'UTC')} AND received_at < {to:DateTime64(3, 'UTC')}
  AND ({reason:String} = '' OR reason_code = {reason:String})
  AND ({source:String} = '' OR startsWith(source_key, {source:String}) OR request_id = {source:String})
  AND ({packet_type:String} = '' OR packet_type = {packet_type:String})`;

const COLUMNS = `source_key, toString(source_kind) AS source_kind, topic, partition, toString(offset) AS offset, request_id, toString(packet_type) AS packet_type,
  toString(reason_code) AS reason_code, reason, ids, raw, toString(raw_encoding) AS raw_encoding, toUnixTimestamp64Milli(received_at) AS received_ms`;

/** One page of quarantined packets. */
export const QUARANTINE_LIST: QuerySpec = {
  name: 'quarantine_list',
  description: 'Quarantined packets, newest first (received_at, then source_key, descending), with their exact bytes and reason.',
  sql: `SELECT ${COLUMNS}
FROM {db:Identifier}.quarantine
WHERE ${FILTER}
  AND (NOT {has_cursor:Bool} OR (received_at, source_key) < ({c_at:DateTime64(3, 'UTC')}, {c_key:String}))
ORDER BY received_at DESC, source_key DESC
LIMIT {limit:UInt32}`,
  params: { ...FILTER_DOCS, ...PAGE_PARAM_DOCS, c_at: 'received_at of the last packet of the previous page', c_key: 'source_key of the last packet of the previous page' },
};

/** Quarantined packets per reason code. */
export const QUARANTINE_COUNTS: QuerySpec = {
  name: 'quarantine_counts',
  description: 'Quarantined packets per reason code matching the filters.',
  sql: `SELECT toString(reason_code) AS k, count() AS n
FROM {db:Identifier}.quarantine
WHERE ${FILTER}
GROUP BY k
ORDER BY k`,
  params: FILTER_DOCS,
};

/** Quarantined packets by id (a retried insert may have stored one twice: one is kept). */
export const QUARANTINE_BY_ID: QuerySpec = {
  name: 'quarantine_by_id',
  description: 'Quarantined packets by quarantine_id (source_key), one row each.',
  sql: `SELECT ${COLUMNS}
FROM {db:Identifier}.quarantine
WHERE source_key IN {ids:Array(String)}
ORDER BY received_at, source_key
LIMIT 1 BY source_key`,
  params: { db: FILTER_DOCS.db, ids: 'quarantine_ids (source_key)' },
};

/** Replays of quarantined packets, oldest first. */
export const QUARANTINE_REPLAYS: QuerySpec = {
  name: 'quarantine_replays',
  // Replays the Kafka worker records in one insert share replayed_at: they are ordered by their
  // position in the topic (source 'kafka:topic/partition@offset'; length first, so @10 follows @9).
  description: 'Every recorded replay of the given quarantined packets, oldest first (a retried insert counted once).',
  sql: `SELECT quarantine_id, replay_id, key_id, corrected, toString(outcome) AS outcome, toString(packet_type) AS packet_type, ids,
  toString(reason_code) AS reason_code, reason, source, toUnixTimestamp64Milli(replayed_at) AS replayed_ms
FROM {db:Identifier}.quarantine_replays
WHERE quarantine_id IN {ids:Array(String)}
ORDER BY quarantine_id, replayed_at, length(source), source, replay_id
LIMIT 1 BY quarantine_id, replay_id`,
  params: { db: FILTER_DOCS.db, ids: 'quarantine_ids (source_key)' },
};

const cursor = cursorCodec('quarantine', z.tuple([msKey, strKey]));

/** Filters of the quarantine list (and of a replay by filter). */
export interface QuarantineFilter {
  reason?: string;
  source?: string;
  packetType?: string;
}

/** Parameters of {@link quarantineList}. */
export interface QuarantineListParams extends QuarantineFilter {
  window: TimeWindow;
  limit: number;
  cursor?: string;
}

/** Parameters of {@link quarantineShow}. */
export interface QuarantineShowParams {
  quarantineId: string;
}

interface QuarantineRowOut {
  source_key: string;
  source_kind: 'kafka' | 'http';
  topic: string;
  partition: number;
  offset: string;
  request_id: string;
  packet_type: string;
  reason_code: string;
  reason: string;
  ids: string[];
  raw: string;
  raw_encoding: QuarantineRecord['raw_encoding'];
  received_ms: number | string;
}

interface ReplayRowOut {
  quarantine_id: string;
  replay_id: string;
  key_id: string;
  corrected: boolean | number;
  outcome: 'accepted' | 'duplicate' | 'rejected';
  packet_type: string;
  ids: string[];
  reason_code: string;
  reason: string;
  source: string;
  replayed_ms: number | string;
}

/** Runs the quarantine list. */
export async function quarantineList(ch: StatementRunner, db: string, p: QuarantineListParams, ctx: QueryContext): Promise<QuarantineList> {
  const after = p.cursor === undefined ? undefined : cursor.decode(p.cursor);
  const base = { db, reason: p.reason ?? '', source: p.source ?? '', packet_type: p.packetType ?? '', ...windowParams(p.window) };
  const counts = await runQuery<{ k: string; n: number }>(ch, QUARANTINE_COUNTS, base, ctx);
  const rows =
    counts.length === 0
      ? []
      : await runQuery<QuarantineRowOut>(ch, QUARANTINE_LIST, { ...base, has_cursor: after !== undefined, c_at: chTime(after?.[0] ?? 0), c_key: after?.[1] ?? '', limit: p.limit + 1 }, ctx);
  const page = pageOf(rows, p.limit);
  const last = page.rows[page.rows.length - 1];
  return {
    records: await withReplays(ch, db, page.rows, ctx),
    counts: countsObject(counts),
    next_cursor: page.more && last ? cursor.encode([Number(last.received_ms), last.source_key]) : null,
  };
}

/** Quarantined packets by id, with their replays (ids not found are left out). */
export async function quarantineByIds(ch: StatementRunner, db: string, ids: readonly string[], ctx: QueryContext): Promise<QuarantineRecord[]> {
  if (ids.length === 0) return [];
  return withReplays(ch, db, await runQuery<QuarantineRowOut>(ch, QUARANTINE_BY_ID, { db, ids }, ctx), ctx);
}

/** One quarantined packet, or null when no packet has this id (within the retention). */
export async function quarantineShow(ch: StatementRunner, db: string, p: QuarantineShowParams, ctx: QueryContext): Promise<QuarantineShow | null> {
  const [record] = await quarantineByIds(ch, db, [p.quarantineId], ctx);
  return record ? { record } : null;
}

async function withReplays(ch: StatementRunner, db: string, rows: QuarantineRowOut[], ctx: QueryContext): Promise<QuarantineRecord[]> {
  const replays = new Map<string, QuarantineRecord['replays']>();
  if (rows.length) {
    for (const r of await runQuery<ReplayRowOut>(ch, QUARANTINE_REPLAYS, { db, ids: rows.map((q) => q.source_key) }, ctx)) {
      const list = replays.get(r.quarantine_id) ?? [];
      list.push({
        replay_id: r.replay_id,
        replayed_at: isoTime(r.replayed_ms),
        key_id: r.key_id,
        corrected: Boolean(r.corrected),
        outcome: r.outcome,
        packet_type: r.packet_type || null,
        ids: r.ids,
        reason: r.reason_code ? { code: r.reason_code, message: r.reason } : null,
        source: r.source,
      });
      replays.set(r.quarantine_id, list);
    }
  }
  return rows.map((q) => {
    const kafka = q.source_kind === 'kafka';
    return {
      quarantine_id: q.source_key,
      received_at: isoTime(q.received_ms),
      reason: { code: q.reason_code, message: q.reason },
      source: {
        kind: q.source_kind,
        topic: kafka ? q.topic : null,
        partition: kafka ? Number(q.partition) : null,
        offset: kafka ? q.offset : null,
        request_id: q.request_id || null,
      },
      packet_type: q.packet_type || null,
      ids: q.ids,
      raw: q.raw,
      raw_encoding: q.raw_encoding,
      replays: replays.get(q.source_key) ?? [],
    };
  });
}
