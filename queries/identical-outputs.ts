/**
 * Identical outputs (SPEC §5, GET /v1/outputs/identical): outputs with the same content
 * (content_hash) produced by the same tool more than once, with the calls that produced them.
 * tool_outputs is sorted by (tool_id, content_hash, …), so the call ids of a page's groups are
 * primary-key look-ups, done after the groups are chosen.
 */
import { z } from 'zod';
import { cursorCodec, numKey, strKey } from './cursor.ts';
import type { IdenticalOutputs } from '../schemas/answers.ts';
import { pageOf, PAGE_PARAM_DOCS, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

/** Call ids returned per group at most. */
export const MAX_CALL_IDS = 1000;

/** One page of groups of identical outputs. */
export const IDENTICAL_OUTPUT_GROUPS: QuerySpec = {
  name: 'identical_output_groups',
  description: 'Groups of outputs of one tool with the same content_hash, at least min_count large; count descending, then content_hash, tool_id.',
  sql: `SELECT content_hash, tool_id, count() AS n
FROM {db:Identifier}.tool_outputs
WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND ({tool_id:String} = '' OR tool_id = {tool_id:String})
GROUP BY tool_id, content_hash
HAVING n >= {min_count:UInt32}
  AND (NOT {has_cursor:Bool} OR n < {c_n:UInt64} OR (n = {c_n:UInt64} AND (content_hash, tool_id) > ({c_hash:String}, {c_tool:String})))
ORDER BY n DESC, content_hash, tool_id
LIMIT {limit:UInt32}`,
  params: {
    ...WINDOW_PARAM_DOCS,
    ...PAGE_PARAM_DOCS,
    tool_id: "only this tool's outputs; '' for every tool",
    min_count: 'smallest group size to report (≥ 2)',
    c_n: 'count of the last group of the previous page',
    c_hash: 'content_hash of the last group of the previous page',
    c_tool: 'tool_id of the last group of the previous page',
  },
};

/** The calls behind given groups, oldest first. */
export const IDENTICAL_OUTPUT_CALLS: QuerySpec = {
  name: 'identical_output_calls',
  description: 'Call ids of the outputs of the given tools and content hashes in the window, oldest first per group.',
  sql: `SELECT tool_id, content_hash, arraySlice(arrayMap(x -> toString(x.2), arraySort(groupArray((created_at, call_id)))), 1, ${MAX_CALL_IDS}) AS call_ids
FROM {db:Identifier}.tool_outputs
WHERE tool_id IN {tools:Array(String)} AND content_hash IN {hashes:Array(String)}
  AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
GROUP BY tool_id, content_hash`,
  params: { ...WINDOW_PARAM_DOCS, tools: 'tool ids of the groups', hashes: 'content hashes of the groups' },
};

const cursor = cursorCodec('identical_outputs', z.tuple([numKey, strKey, strKey]));

/** Parameters of {@link identicalOutputs}. */
export interface IdenticalOutputsParams {
  minCount: number;
  /** Only this tool's outputs when set. */
  toolId?: string;
  window: TimeWindow;
  limit: number;
  cursor?: string;
}

/** Runs the identical-outputs groups. */
export async function identicalOutputs(ch: StatementRunner, db: string, p: IdenticalOutputsParams, ctx: QueryContext): Promise<IdenticalOutputs> {
  const after = p.cursor === undefined ? undefined : cursor.decode(p.cursor);
  const win = windowParams(p.window);
  const rows = await runQuery<{ content_hash: string; tool_id: string; n: number }>(
    ch,
    IDENTICAL_OUTPUT_GROUPS,
    {
      db,
      ...win,
      tool_id: p.toolId ?? '',
      min_count: p.minCount,
      has_cursor: after !== undefined,
      c_n: after?.[0] ?? 0,
      c_hash: after?.[1] ?? '',
      c_tool: after?.[2] ?? '',
      limit: p.limit + 1,
    },
    ctx,
  );
  const page = pageOf(rows, p.limit);
  const ids = new Map<string, string[]>();
  if (page.rows.length > 0) {
    const calls = await runQuery<{ tool_id: string; content_hash: string; call_ids: string[] }>(
      ch,
      IDENTICAL_OUTPUT_CALLS,
      { db, ...win, tools: [...new Set(page.rows.map((r) => r.tool_id))], hashes: [...new Set(page.rows.map((r) => r.content_hash))] },
      ctx,
    );
    for (const c of calls) ids.set(`${c.tool_id}\u0000${c.content_hash}`, c.call_ids);
  }
  const last = page.rows[page.rows.length - 1];
  return {
    groups: page.rows.map((r) => ({
      content_hash: r.content_hash,
      tool_id: r.tool_id,
      count: Number(r.n),
      call_ids: ids.get(`${r.tool_id}\u0000${r.content_hash}`) ?? [],
    })),
    next_cursor: page.more && last ? cursor.encode([Number(last.n), last.content_hash, last.tool_id]) : null,
  };
}
