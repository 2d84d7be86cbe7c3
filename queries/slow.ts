/**
 * Slow calls (SPEC §5, GET /v1/calls/slow?threshold_ms=30000): calls that took longer than a
 * threshold, slowest first, with their count over the window.
 */
import { z } from 'zod';
import { cursorCodec, numKey, uuidKey } from './cursor.ts';
import { INVOCATION_COLUMNS, toInvocation, type InvocationReadRow } from './rows.ts';
import type { Slow } from '../schemas/answers.ts';
import { pageOf, PAGE_PARAM_DOCS, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

/** One page of the calls above the threshold. */
export const SLOW_CALLS: QuerySpec = {
  name: 'slow_calls',
  description: 'Calls with duration_ms > threshold_ms, by duration descending (then call_id descending).',
  sql: `SELECT ${INVOCATION_COLUMNS}
FROM {db:Identifier}.tool_invocations
WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND duration_ms > {threshold_ms:UInt64}
  AND (NOT {has_cursor:Bool} OR (duration_ms, call_id) < ({c_ms:UInt64}, {c_id:UUID}))
ORDER BY duration_ms DESC, call_id DESC
LIMIT {limit:UInt32}`,
  params: {
    ...WINDOW_PARAM_DOCS,
    ...PAGE_PARAM_DOCS,
    threshold_ms: 'calls lasting strictly longer than this',
    c_ms: 'duration_ms of the last row of the previous page',
    c_id: 'call_id of the last row of the previous page',
  },
};

/** Number of calls above the threshold. */
export const SLOW_COUNT: QuerySpec = {
  name: 'slow_count',
  description: 'Number of calls with duration_ms > threshold_ms.',
  sql: `SELECT count() AS count
FROM {db:Identifier}.tool_invocations
WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND duration_ms > {threshold_ms:UInt64}`,
  params: { ...WINDOW_PARAM_DOCS, threshold_ms: 'calls lasting strictly longer than this' },
};

const cursor = cursorCodec('slow', z.tuple([numKey, uuidKey]));

/** Parameters of {@link slowCalls}. */
export interface SlowParams {
  thresholdMs: number;
  window: TimeWindow;
  limit: number;
  cursor?: string;
}

/** Runs the slow-calls list. */
export async function slowCalls(ch: StatementRunner, db: string, p: SlowParams, ctx: QueryContext): Promise<Slow> {
  const after = p.cursor === undefined ? undefined : cursor.decode(p.cursor);
  const base = { db, threshold_ms: p.thresholdMs, ...windowParams(p.window) };
  const [total] = await runQuery<{ count: number }>(ch, SLOW_COUNT, base, ctx);
  const count = Number(total?.count ?? 0);
  const rows =
    count === 0
      ? []
      : await runQuery<InvocationReadRow>(
          ch,
          SLOW_CALLS,
          { ...base, has_cursor: after !== undefined, c_ms: after?.[0] ?? 0, c_id: after?.[1] ?? '00000000-0000-0000-0000-000000000000', limit: p.limit + 1 },
          ctx,
        );
  const page = pageOf(rows, p.limit);
  const last = page.rows[page.rows.length - 1];
  return {
    threshold_ms: p.thresholdMs,
    invocations: page.rows.map((r) => toInvocation(r, ctx.expensiveThresholdUsd)),
    count,
    next_cursor: page.more && last ? cursor.encode([Number(last.duration_ms), last.call_id]) : null,
  };
}
