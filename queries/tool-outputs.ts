/**
 * ByTool outputs (SPEC §5, GET /v1/tools/{tool_id}/outputs): the distinct outputs of one tool,
 * one per content_hash, most recently seen first. tool_outputs is sorted by (tool_id,
 * content_hash, …): the tool is one key range, and the samples of a page are key look-ups.
 */
import { z } from 'zod';
import { cursorCodec, msKey, strKey } from './cursor.ts';
import type { ToolOutputs } from '../schemas/answers.ts';
import { isoTime, pageOf, PAGE_PARAM_DOCS, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

/** One page of a tool's distinct outputs. */
export const TOOL_OUTPUTS: QuerySpec = {
  name: 'tool_outputs',
  description: "One tool's distinct outputs (one per content_hash): count, first and last seen; last seen descending, then content_hash.",
  sql: `SELECT content_hash, count() AS n,
  toUnixTimestamp64Milli(min(created_at)) AS first_ms, toUnixTimestamp64Milli(max(created_at)) AS last_ms
FROM {db:Identifier}.tool_outputs
WHERE tool_id = {tool_id:String}
  AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
GROUP BY content_hash
HAVING NOT {has_cursor:Bool} OR (last_ms, content_hash) < ({c_at_ms:Int64}, {c_hash:String})
ORDER BY last_ms DESC, content_hash DESC
LIMIT {limit:UInt32}`,
  params: {
    ...WINDOW_PARAM_DOCS,
    ...PAGE_PARAM_DOCS,
    tool_id: 'the tool',
    c_at_ms: 'last seen (epoch ms) of the last output of the previous page',
    c_hash: 'content_hash of the last output of the previous page',
  },
};

/** Content type, size and sample of given outputs of a tool. */
export const TOOL_OUTPUT_SAMPLES: QuerySpec = {
  name: 'tool_output_samples',
  description: "Content type, size and sample (of the first output in the window) of given content hashes of one tool.",
  sql: `SELECT content_hash, argMin(content_type, created_at) AS content_type, argMin(size_bytes, created_at) AS size_bytes,
  argMin(sample, created_at) AS sample
FROM {db:Identifier}.tool_outputs
WHERE tool_id = {tool_id:String} AND content_hash IN {hashes:Array(String)}
  AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
GROUP BY content_hash`,
  params: { ...WINDOW_PARAM_DOCS, tool_id: 'the tool', hashes: 'the content hashes' },
};

const cursor = cursorCodec('tool_outputs', z.tuple([msKey, strKey]));

/** Parameters of {@link toolOutputs}. */
export interface ToolOutputsParams {
  toolId: string;
  window: TimeWindow;
  limit: number;
  cursor?: string;
}

type Sample = { content_hash: string; content_type: ToolOutputs['outputs'][number]['content_type']; size_bytes: number; sample: string | null };

/** Runs one page of a tool's distinct outputs. */
export async function toolOutputs(ch: StatementRunner, db: string, p: ToolOutputsParams, ctx: QueryContext): Promise<ToolOutputs> {
  const after = p.cursor === undefined ? undefined : cursor.decode(p.cursor);
  const base = { db, tool_id: p.toolId, ...windowParams(p.window) };
  const rows = await runQuery<{ content_hash: string; n: number; first_ms: number; last_ms: number }>(
    ch,
    TOOL_OUTPUTS,
    { ...base, has_cursor: after !== undefined, c_at_ms: after?.[0] ?? 0, c_hash: after?.[1] ?? '', limit: p.limit + 1 },
    ctx,
  );
  const page = pageOf(rows, p.limit);
  const samples = new Map<string, Sample>();
  if (page.rows.length > 0) {
    const found = await runQuery<Sample>(ch, TOOL_OUTPUT_SAMPLES, { ...base, hashes: page.rows.map((r) => r.content_hash) }, ctx);
    for (const s of found) samples.set(s.content_hash, s);
  }
  const last = page.rows[page.rows.length - 1];
  return {
    tool_id: p.toolId,
    outputs: page.rows.map((r) => {
      const s = samples.get(r.content_hash);
      return {
        content_hash: r.content_hash,
        content_type: s?.content_type ?? 'text',
        size_bytes: Number(s?.size_bytes ?? 0),
        sample: s?.sample ?? null,
        count: Number(r.n),
        first_seen: isoTime(r.first_ms),
        last_seen: isoTime(r.last_ms),
      };
    }),
    next_cursor: page.more && last ? cursor.encode([Number(last.last_ms), last.content_hash]) : null,
  };
}
