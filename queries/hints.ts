/**
 * Optimization hints (GET /v1/hints, `tool-audit hints`, the hints panel): what the hints job
 * and external producers stored in workflow_optimizations, newest first (created_at, then
 * hint_id, descending), one row per hint_id, optionally of one kind.
 */
import { z } from 'zod';
import type { HINT_KINDS } from '../schemas/optimization-hint.ts';
import { cursorCodec, msKey, uuidKey } from './cursor.ts';
import type { HintsList } from '../schemas/answers.ts';
import { chTime, isoTime, pageOf, PAGE_PARAM_DOCS, runQuery, windowParams, type QueryContext, type QuerySpec, type StatementRunner, type TimeWindow } from './sql.ts';

/** One page of hints. */
export const HINTS_LIST: QuerySpec = {
  name: 'hints',
  description: "Optimization hints, newest first (created_at, then hint_id, descending), each hint_id once with its newest row in the window (its latest evidence); kind '' for every kind.",
  // The newest row of each hint in the window first, then the page: a cursor applied before
  // LIMIT 1 BY would let an older row of a hint already shown come back on a later page.
  sql: `SELECT * FROM (
  SELECT toString(hint_id) AS id, hint_id AS uid, created_at AS at, toString(kind) AS kind, tool_ids, task_ids_sample, evidence, estimated_savings_ms, estimated_savings_usd,
    toUnixTimestamp64Milli(window_from) AS window_from_ms, toUnixTimestamp64Milli(window_to) AS window_to_ms, toUnixTimestamp64Milli(created_at) AS created_ms, toString(origin) AS origin
  FROM {db:Identifier}.workflow_optimizations
  WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
    AND ({kind:String} = '' OR kind = {kind:String})
  ORDER BY created_at DESC, hint_id DESC
  LIMIT 1 BY hint_id
)
WHERE NOT {has_cursor:Bool} OR (at, uid) < ({c_at:DateTime64(3, 'UTC')}, toUUID({c_id:String}))
ORDER BY at DESC, uid DESC
LIMIT {limit:UInt32}`,
  params: {
    db: 'database of the segments (Identifier)',
    from: "inclusive lower bound of created_at, 'YYYY-MM-DD hh:mm:ss.sss' UTC",
    to: 'exclusive upper bound of created_at, same format',
    kind: "only this kind ('cache_candidate', 'bundle_candidate', 'retry_storm'); '' for every kind",
    ...PAGE_PARAM_DOCS,
    c_at: 'created_at of the last hint of the previous page',
    c_id: 'hint_id of the last hint of the previous page (a zero UUID without cursor)',
  },
};

/** Parameters of {@link hintsList}. */
export interface HintsParams {
  kind?: (typeof HINT_KINDS)[number];
  window: TimeWindow;
  limit: number;
  cursor?: string;
}

const cursor = cursorCodec('hints', z.tuple([msKey, uuidKey]));
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

interface HintDbRow {
  id: string;
  kind: (typeof HINT_KINDS)[number];
  tool_ids: string[];
  task_ids_sample: string[];
  evidence: string;
  estimated_savings_ms: number | string;
  estimated_savings_usd: number;
  window_from_ms: number | string;
  window_to_ms: number | string;
  created_ms: number | string;
  origin: 'producer' | 'analyzer';
}

/** Runs the hints list. */
export async function hintsList(ch: StatementRunner, db: string, p: HintsParams, ctx: QueryContext): Promise<HintsList> {
  const after = p.cursor === undefined ? undefined : cursor.decode(p.cursor);
  const rows = await runQuery<HintDbRow>(
    ch,
    HINTS_LIST,
    { db, kind: p.kind ?? '', ...windowParams(p.window), has_cursor: after !== undefined, c_at: chTime(after?.[0] ?? 0), c_id: after?.[1] ?? ZERO_UUID, limit: p.limit + 1 },
    ctx,
  );
  const page = pageOf(rows, p.limit);
  const last = page.rows[page.rows.length - 1];
  return {
    hints: page.rows.map((r) => ({
      hint_id: r.id,
      kind: r.kind,
      tool_ids: r.tool_ids,
      task_ids_sample: r.task_ids_sample,
      evidence: JSON.parse(r.evidence) as Record<string, unknown>,
      estimated_savings_ms: Number(r.estimated_savings_ms),
      estimated_savings_usd: Number(r.estimated_savings_usd),
      window_from: isoTime(r.window_from_ms),
      window_to: isoTime(r.window_to_ms),
      created_at: isoTime(r.created_ms),
      origin: r.origin,
    })),
    next_cursor: page.more && last ? cursor.encode([Number(last.created_ms), last.id]) : null,
  };
}
