/**
 * ByToolId invocations (SPEC §5, GET /v1/tools/{tool_id}/invocations): one tool's calls, newest
 * first, a page at a time. Served by the `by_tool` projection (ORDER BY tool_id, created_at).
 */
import { z } from 'zod';
import { cursorCodec, msKey, uuidKey } from './cursor.ts';
import { INVOCATION_COLUMNS, toInvocation, type InvocationReadRow } from './rows.ts';
import type { InvocationList } from '../schemas/answers.ts';
import { chTime, pageOf, PAGE_PARAM_DOCS, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

/** SQL of one newest-first page of the invocations matching `filter` (a condition) in the window. */
export const newestFirstSql = (filter: string) => `SELECT ${INVOCATION_COLUMNS}
FROM {db:Identifier}.tool_invocations
WHERE ${filter}
  AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND (NOT {has_cursor:Bool} OR (created_at, call_id) < ({c_at:DateTime64(3, 'UTC')}, {c_id:UUID}))
ORDER BY created_at DESC, call_id DESC
LIMIT {limit:UInt32}`;

/** Parameters of {@link newestFirstSql} (besides the filter's own). */
export const NEWEST_FIRST_PARAM_DOCS = {
  ...WINDOW_PARAM_DOCS,
  ...PAGE_PARAM_DOCS,
  c_at: 'created_at of the last row of the previous page',
  c_id: 'call_id of the last row of the previous page',
};

/** One page of a tool's invocations. */
export const TOOL_INVOCATIONS: QuerySpec = {
  name: 'tool_invocations',
  description: "One tool's invocations, newest first (created_at, then call_id, descending).",
  sql: newestFirstSql('tool_id = {tool_id:String}'),
  params: { ...NEWEST_FIRST_PARAM_DOCS, tool_id: 'the tool' },
};

/** Cursor of newest-first invocation lists: (created_at ms, call_id). */
export const newestFirstCursor = (tag: string) => cursorCodec(tag, z.tuple([msKey, uuidKey]));
const cursor = newestFirstCursor('tool_invocations');

/** Parameters of {@link byToolInvocations}. */
export interface ByToolInvocationsParams {
  toolId: string;
  window: TimeWindow;
  limit: number;
  cursor?: string;
}

/** Cursor placeholders of a newest-first list continuing after `cursorText` (or from the top). */
export function newestFirstParams(codec: ReturnType<typeof newestFirstCursor>, cursorText: string | undefined) {
  const after = cursorText === undefined ? undefined : codec.decode(cursorText);
  return {
    has_cursor: after !== undefined,
    c_at: chTime(after?.[0] ?? 0),
    c_id: after?.[1] ?? '00000000-0000-0000-0000-000000000000',
  };
}

/** Runs one page of a tool's invocations. */
export async function byToolInvocations(ch: StatementRunner, db: string, p: ByToolInvocationsParams, ctx: QueryContext): Promise<InvocationList> {
  const rows = await runQuery<InvocationReadRow>(
    ch,
    TOOL_INVOCATIONS,
    { db, tool_id: p.toolId, ...windowParams(p.window), ...newestFirstParams(cursor, p.cursor), limit: p.limit + 1 },
    ctx,
  );
  const page = pageOf(rows, p.limit);
  const last = page.rows[page.rows.length - 1];
  return {
    invocations: page.rows.map((r) => toInvocation(r, ctx.expensiveThresholdUsd)),
    next_cursor: page.more && last ? cursor.encode([Number(last.created_ms), last.call_id]) : null,
  };
}
