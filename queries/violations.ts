/**
 * Violations (SPEC §5, GET /v1/violations): what the auditor found (SHOULD and cross-segment
 * rules), newest first, and how many of each invariant, over the window of detected_at.
 */
import { z } from 'zod';
import { cursorCodec, msKey, strKey } from './cursor.ts';
import type { Violations } from '../schemas/answers.ts';
import { chTime, countsObject, isoTime, pageOf, PAGE_PARAM_DOCS, runQuery, windowParams, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

const WINDOW_DOCS = {
  db: 'database of the segments (Identifier)',
  from: "inclusive lower bound of detected_at, 'YYYY-MM-DD hh:mm:ss.sss' UTC",
  to: 'exclusive upper bound of detected_at, same format',
  invariant: "only this invariant (e.g. 'I8'); '' for every invariant",
  task_id: "only violations naming a call of this task among their ids; '' for every task",
  call_id: "only violations naming this call among their ids; '' for every call",
  tool_id: "only violations naming a call of this tool among their ids; '' for every tool",
};

/**
 * The asked task's call ids: a range read of tool_invocations (ordered by task). None without a
 * task: '' is also the task of calls stored without one, and ClickHouse runs a statement's
 * subqueries even where a constant condition makes them moot.
 */
const TASK_CALLS = `SELECT toString(call_id) FROM {db:Identifier}.tool_invocations WHERE {task_id:String} != '' AND task_id = {task_id:String}`;
/**
 * Up to this many calls, a task's violations are also looked up through idx_ids (migration 024, a
 * bloom filter of ids), which only hasAny against the array of the call ids can use; hasAny costs
 * ids × calls per violation read, so a larger task is matched through the hash set of its calls
 * alone (measured: a 150,000-call task over 200,000 violations, 43 s by hasAny, 52 ms by the set).
 */
const INDEXED_TASK_MAX_CALLS = 1000;

/** Every id the window's violations name, as a UUID (others read as the zero UUID). */
const NAMED_IDS = `SELECT toUUIDOrZero(arrayJoin(ids)) FROM {db:Identifier}.violations WHERE detected_at >= {from:DateTime64(3, 'UTC')} AND detected_at < {to:DateTime64(3, 'UTC')}`;
/**
 * The calls of the asked tool among those the window's violations name, found by their created_at
 * from call_keys: read and kept in proportion to the window's violations, not to the tool's calls.
 */
const TOOL_CALLS = `SELECT toString(call_id) FROM {db:Identifier}.tool_invocations WHERE {tool_id:String} != '' AND tool_id = {tool_id:String}
  AND call_id IN (${NAMED_IDS}) AND created_at IN (SELECT created_at FROM {db:Identifier}.call_keys WHERE {tool_id:String} != '' AND call_id IN (${NAMED_IDS}))`;

/**
 * The filters of both statements (and of the violations' export). A task's violations are those naming one of its calls (every
 * rule on calls, outputs and dependencies names the call ids involved).
 */
export const VIOLATION_FILTERS = `detected_at >= {from:DateTime64(3, 'UTC')} AND detected_at < {to:DateTime64(3, 'UTC')}
  AND ({invariant:String} = '' OR invariant = {invariant:String})
  AND ({call_id:String} = '' OR has(ids, {call_id:String}))
  AND ({task_id:String} = '' OR (arrayExists(id -> id IN (${TASK_CALLS}), ids)
    AND ((SELECT count() FROM (${TASK_CALLS})) > ${INDEXED_TASK_MAX_CALLS} OR hasAny(ids, (SELECT groupArray(*) FROM (${TASK_CALLS}))))))
  AND ({tool_id:String} = '' OR arrayExists(id -> id IN (${TOOL_CALLS}), ids))`;

/** One page of violations. */
export const VIOLATIONS: QuerySpec = {
  name: 'violations',
  description: 'Violations recorded by the auditor, newest first (detected_at, then violation_key, descending).',
  sql: `SELECT invariant, packet_type, ids, detail, toUnixTimestamp64Milli(detected_at) AS detected_ms, violation_key
FROM {db:Identifier}.violations
WHERE ${VIOLATION_FILTERS}
  AND (NOT {has_cursor:Bool} OR (detected_at, violation_key) < ({c_at:DateTime64(3, 'UTC')}, {c_key:String}))
ORDER BY detected_at DESC, violation_key DESC
LIMIT {limit:UInt32}`,
  params: {
    ...WINDOW_DOCS,
    ...PAGE_PARAM_DOCS,
    c_at: 'detected_at of the last violation of the previous page',
    c_key: 'violation_key of the last violation of the previous page',
  },
};

/** Violations per invariant. */
export const VIOLATION_COUNTS: QuerySpec = {
  name: 'violation_counts',
  description: 'Violations per invariant in the window.',
  sql: `SELECT toString(invariant) AS k, count() AS n
FROM {db:Identifier}.violations
WHERE ${VIOLATION_FILTERS}
GROUP BY k
ORDER BY k`,
  params: WINDOW_DOCS,
};

/**
 * The task of each stored call among {ids:Array(String)}, found by its created_at from call_keys (a
 * primary-key read) rather than the bloom filter on call_id over the whole table.
 */
export const VIOLATION_TASKS: QuerySpec = {
  name: 'violation_tasks',
  description: 'The task of each stored call among the ids (\'\' = a call without a task).',
  sql: `SELECT toString(call_id) AS id, task_id
FROM {db:Identifier}.tool_invocations
WHERE call_id IN arrayMap(k -> toUUIDOrZero(k), {ids:Array(String)})
  AND created_at IN (SELECT created_at FROM {db:Identifier}.call_keys WHERE call_id IN arrayMap(k -> toUUIDOrZero(k), {ids:Array(String)}))
LIMIT 1 BY call_id`,
  params: { db: WINDOW_DOCS.db, ids: 'violation ids that may be call ids' },
};

const cursor = cursorCodec('violations', z.tuple([msKey, strKey]));

/** Parameters of {@link violations}. */
export interface ViolationsParams {
  /** Only this invariant when set. */
  invariant?: string;
  /** Only violations naming a call of this task. */
  taskId?: string;
  /** Only violations naming this call. */
  callId?: string;
  /** Only violations naming a call of this tool. */
  toolId?: string;
  window: TimeWindow;
  limit: number;
  cursor?: string;
}

interface ViolationRow {
  invariant: string;
  packet_type: string;
  ids: string[];
  detail: string;
  detected_ms: number;
  violation_key: string;
}

/** Runs the violations list. */
export async function violations(ch: StatementRunner, db: string, p: ViolationsParams, ctx: QueryContext): Promise<Violations> {
  const after = p.cursor === undefined ? undefined : cursor.decode(p.cursor);
  const base = { db, invariant: p.invariant ?? '', task_id: p.taskId ?? '', call_id: p.callId ?? '', tool_id: p.toolId ?? '', ...windowParams(p.window) };
  const counts = await runQuery<{ k: string; n: number }>(ch, VIOLATION_COUNTS, base, ctx);
  const rows =
    counts.length === 0
      ? []
      : await runQuery<ViolationRow>(
          ch,
          VIOLATIONS,
          { ...base, has_cursor: after !== undefined, c_at: chTime(after?.[0] ?? 0), c_key: after?.[1] ?? '', limit: p.limit + 1 },
          ctx,
        );
  const page = pageOf(rows, p.limit);
  const last = page.rows[page.rows.length - 1];
  const ids = [...new Set(page.rows.flatMap((r) => r.ids))];
  const tasks = ids.length === 0 ? [] : await runQuery<{ id: string; task_id: string }>(ch, VIOLATION_TASKS, { db, ids }, ctx);
  const taskOf = new Map(tasks.map((t) => [t.id, t.task_id]));
  const taskOfRow = (r: ViolationRow): string | null => {
    const call = r.ids.find((id) => taskOf.has(id.toLowerCase()));
    return call === undefined ? null : taskOf.get(call.toLowerCase()) || null;
  };
  return {
    violations: page.rows.map((r) => ({ invariant: r.invariant, packet_type: r.packet_type, ids: r.ids, detail: r.detail, detected_at: isoTime(r.detected_ms), task_id: taskOfRow(r) })),
    counts: countsObject(counts),
    next_cursor: page.more && last ? cursor.encode([Number(last.detected_ms), last.violation_key]) : null,
  };
}

