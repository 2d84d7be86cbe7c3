/**
 * Search (GET /v1/search, `tool-audit search`, the /search page): calls and outputs whose args,
 * result summary, error, output sample or full output content hold every term and phrase of `q`
 * (search-terms.ts), newest first, each hit naming its field with an excerpt. Each field has a
 * text index of its lower-cased text (migration 031), which every item's tokens use to skip
 * granules; the exact match (token boundaries, phrases) is checked on the rows that remain.
 */
import { z } from 'zod';
import { cursorCodec, msKey, strKey } from './cursor.ts';
import { SEARCH_FIELDS, type SearchAnswer, type SearchField } from '../schemas/answers.ts';
import { parseSearch, type SearchItem } from './search-terms.ts';
import { chTime, isoTime, pageOf, runQuery, windowParams, type QueryContext, type StatementRunner, type TimeWindow } from './sql.ts';
import { badRequest } from '../platform/errors.ts';

/** Parameters of {@link search}. */
export interface SearchParams {
  /** Terms and "quoted phrases" (search-terms.ts). */
  q: string;
  window: TimeWindow;
  toolId?: string;
  agentId?: string;
  status?: string;
  taskId?: string;
  orchestrator?: string;
  /** Only this field (default: every field). */
  field?: SearchField;
  limit: number;
  cursor?: string;
}

const cursor = cursorCodec('search', z.tuple([msKey, strKey, z.enum(SEARCH_FIELDS)]));

/** Where each field lives: its table, its text, the hit's id and columns. */
const FIELD_SOURCES: Record<Exclude<SearchField, 'content'>, { table: string; text: string; kind: 'call' | 'output' }> = {
  args: { table: 'tool_invocations', text: 'args', kind: 'call' },
  result_summary: { table: 'tool_invocations', text: 'result_summary', kind: 'call' },
  error: { table: 'tool_invocations', text: "ifNull(error, '')", kind: 'call' },
  sample: { table: 'tool_outputs', text: 'sample', kind: 'output' },
};

/** The match of every item in `text` (lower-cased as the index is): its tokens for the index, then exactly. */
function matchSql(text: string, items: SearchItem[], params: Record<string, unknown>): string {
  const lower = `lowerUTF8(${text})`;
  return items
    .map((it, i) => {
      const forms = it.forms.map((f, j) => {
        const key = `i${i}f${j}`;
        if (f.pattern === null) {
          params[`${key}t`] = f.tokens[0];
          return `hasToken(${lower}, {${key}t:String})`;
        }
        params[`${key}t`] = f.tokens;
        params[`${key}p`] = f.pattern;
        return `(hasAllTokens(${lower}, {${key}t:Array(String)}) AND match(${lower}, {${key}p:String}))`;
      });
      return forms.length === 1 ? forms[0] : `(${forms.join(' OR ')})`;
    })
    .join(' AND ');
}

/** The excerpt: 160 characters of `text` from a little before the first item's first form found. */
function excerptSql(text: string, items: SearchItem[], params: Record<string, unknown>): string {
  params.ex = items[0]?.forms.map((f) => f.text) ?? [];
  return `substringUTF8(${text}, greatest(1, toInt64(arrayMax(arrayMap(x -> positionCaseInsensitiveUTF8(${text}, x), {ex:Array(String)}))) - 40), 160)`;
}

/** The filters of a call (the calls' own columns). */
const CALL_FILTERS = `({tool_id:String} = '' OR tool_id = {tool_id:String}) AND ({agent_id:String} = '' OR agent_id = {agent_id:String})
  AND ({status:String} = '' OR toString(status) = {status:String}) AND ({task_id:String} = '' OR task_id = {task_id:String})
  AND ({orchestrator:String} = '' OR toString(orchestrator) = {orchestrator:String})`;
const WINDOW = "created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}";
/** The outputs of the window and of the tool and task filters. */
const OUTPUT_SCOPE = `${WINDOW} AND ({tool_id:String} = '' OR tool_id = {tool_id:String}) AND ({task_id:String} = '' OR task_id = {task_id:String})`;
/** Whether a call filter is asked for: without one, the subqueries below read nothing (ClickHouse runs them anyway). */
const CALL_FILTERED = "({agent_id:String} != '' OR {status:String} != '' OR {orchestrator:String} != '')";
/** The window's outputs' calls, only when a call filter is asked for. */
const OUTPUT_CALLS = `SELECT call_id FROM {db:Identifier}.tool_outputs WHERE ${CALL_FILTERED} AND ${OUTPUT_SCOPE}`;
/**
 * The same filters for an output: its tool and task, and the rest through its call — among the
 * calls of the window's outputs only (found by their created_at from call_keys), so the set is
 * bounded by the window, not by every call ever stored.
 */
const OUTPUT_FILTERS = `${OUTPUT_SCOPE}
  AND (NOT ${CALL_FILTERED} OR call_id IN (SELECT call_id FROM {db:Identifier}.tool_invocations WHERE ${CALL_FILTERED} AND ${CALL_FILTERS}
         AND call_id IN (${OUTPUT_CALLS}) AND created_at IN (SELECT created_at FROM {db:Identifier}.call_keys WHERE call_id IN (${OUTPUT_CALLS}))))`;
const AFTER = (id: string, field: string) =>
  `(NOT {has_cursor:Bool} OR (created_at, ${id}, '${field}') < ({c_at:DateTime64(3, 'UTC')}, {c_id:String}, {c_field:String}))`;

/** One field's SELECT of hits (at most `limit`, newest first). */
function fieldSelect(field: SearchField, items: SearchItem[], params: Record<string, unknown>): string {
  if (field === 'content') {
    // Contents are stored once per hash: the outputs of the matching hashes are the hits.
    // The matching contents' hashes: as many as distinct contents hold every item (a set of the
    // window's outputs' hashes instead was every output's for the usual window).
    // Only a version that hashes to its content_hash is an output's: one inserted afterwards
    // under the hash is no hit (the hash is computed for matching contents alone).
    // Inside the window: a content last seen before it belongs to no output of it (last_seen is
    // the newest output's created_at), so contents older than the window are never matched.
    const inner = `SELECT content_hash FROM {db:Identifier}.output_contents WHERE last_seen >= {from:DateTime64(3, 'UTC')} AND ${matchSql('content', items, params)} AND lower(hex(SHA256(content))) = content_hash`;
    return `SELECT 'output' AS kind, toString(call_id) AS call_id, toString(output_id) AS output_id, task_id, toString(tool_id) AS tool_id, created_at, 'content' AS field, toString(content_hash) AS excerpt
      FROM {db:Identifier}.tool_outputs WHERE ${OUTPUT_FILTERS} AND content_hash IN (${inner}) AND ${AFTER('toString(output_id)', 'content')}
      ORDER BY created_at DESC, output_id DESC LIMIT {limit:UInt32}`;
  }
  const s = FIELD_SOURCES[field];
  const id = s.kind === 'call' ? 'toString(call_id)' : 'toString(output_id)';
  return `SELECT '${s.kind}' AS kind, toString(call_id) AS call_id, ${s.kind === 'call' ? 'NULL' : 'toString(output_id)'} AS output_id, ${s.kind === 'call' ? "nullIf(task_id, '')" : 'task_id'} AS task_id,
      toString(tool_id) AS tool_id, created_at, '${field}' AS field, ${excerptSql(s.text, items, params)} AS excerpt
    FROM {db:Identifier}.${s.table} WHERE ${s.kind === 'call' ? `${WINDOW} AND ${CALL_FILTERS}` : OUTPUT_FILTERS} AND ${matchSql(s.text, items, params)} AND ${AFTER(id, field)}
    ORDER BY created_at DESC, ${id} DESC LIMIT {limit:UInt32}`;
}

interface HitRow {
  kind: 'call' | 'output';
  call_id: string;
  output_id: string | null;
  task_id: string | null;
  tool_id: string;
  created_ms: string;
  field: SearchField;
  excerpt: string;
}

/** Runs a search. */
export async function search(ch: StatementRunner, db: string, p: SearchParams, ctx: QueryContext): Promise<SearchAnswer> {
  // No question, no hits (a route called without q answers as an empty range does).
  if (p.q.trim() === '') return { hits: [], next_cursor: null };
  const parsed = parseSearch(p.q);
  if ('error' in parsed) throw badRequest(parsed.error);
  const items = parsed.items;
  const after = p.cursor === undefined ? undefined : cursor.decode(p.cursor);
  const params: Record<string, unknown> = {
    db,
    ...windowParams(p.window),
    tool_id: p.toolId ?? '',
    agent_id: p.agentId ?? '',
    status: p.status ?? '',
    task_id: p.taskId ?? '',
    orchestrator: p.orchestrator ?? '',
    has_cursor: after !== undefined,
    c_at: chTime(after?.[0] ?? 0),
    c_id: after?.[1] ?? '',
    c_field: after?.[2] ?? 'args',
    limit: p.limit + 1,
  };
  const fields = p.field ? [p.field] : SEARCH_FIELDS;
  const selects = fields.map((f) => `SELECT * FROM (${fieldSelect(f, items, params)})`);
  const sql = `SELECT kind, call_id, output_id, task_id, tool_id, toUnixTimestamp64Milli(created_at) AS created_ms, field, excerpt FROM (${selects.join('\nUNION ALL\n')})
    ORDER BY created_at DESC, if(kind = 'call', call_id, output_id) DESC, field DESC LIMIT {limit:UInt32}`;
  const rows = await runQuery<HitRow>(ch, { name: 'search', sql }, params, ctx);
  const page = pageOf(rows, p.limit);
  const hits = await withContentExcerpts(ch, db, page.rows, items, ctx);
  const last = page.rows[page.rows.length - 1];
  return {
    hits: hits.map((r) => ({ kind: r.kind, call_id: r.call_id, output_id: r.output_id, task_id: r.task_id || null, tool_id: r.tool_id, created_at: isoTime(r.created_ms), field: r.field, excerpt: r.excerpt })),
    next_cursor: page.more && last ? cursor.encode([Number(last.created_ms), last.kind === 'call' ? last.call_id : (last.output_id ?? ''), last.field]) : null,
  };
}

/** Content hits carry their content_hash as excerpt until here: their excerpts, read for the page's hashes only. */
async function withContentExcerpts(ch: StatementRunner, db: string, rows: HitRow[], items: SearchItem[], ctx: QueryContext): Promise<HitRow[]> {
  const hashes = [...new Set(rows.filter((r) => r.field === 'content').map((r) => r.excerpt))];
  if (hashes.length === 0) return rows;
  const params: Record<string, unknown> = { db, hashes };
  const found = await runQuery<{ h: string; excerpt: string }>(
    ch,
    { name: 'search_content_excerpts', sql: `SELECT content_hash AS h, any(${excerptSql('content', items, params)}) AS excerpt FROM {db:Identifier}.output_contents WHERE content_hash IN {hashes:Array(String)} AND lower(hex(SHA256(content))) = content_hash GROUP BY h` },
    params,
    ctx,
  );
  const byHash = new Map(found.map((f) => [f.h, f.excerpt]));
  return rows.map((r) => (r.field === 'content' ? { ...r, excerpt: byHash.get(r.excerpt) ?? '' } : r));
}
