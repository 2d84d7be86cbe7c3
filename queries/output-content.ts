/**
 * One output's full content (GET /v1/outputs/{output_id}/content): the output's metadata by its
 * id (tool_outputs' bloom filter on output_id), then its content by hash from output_contents
 * (stored once per content_hash, ordered by it: one granule). The tables are qualified in WHERE:
 * ClickHouse would otherwise read `output_id` as the SELECT's text alias. At most `maxBytes` of UTF-8 are
 * returned, cut at a code point, with `truncated` saying so.
 */
import { z } from 'zod';
import { contentTypeSchema } from '../schemas/tool-output.ts';
import { runQuery, type QueryContext, type QuerySpec, type StatementRunner } from './sql.ts';

/** The output's metadata by id. */
export const OUTPUT_BY_ID: QuerySpec = {
  name: 'output_by_id',
  description: 'One output (tool_outputs) by its output_id.',
  sql: `SELECT toString(output_id) AS output_id, toString(call_id) AS call_id, tool_id, toString(content_type) AS content_type,
  toString(content_hash) AS content_hash, size_bytes, toUnixTimestamp64Milli(created_at) AS created_ms
FROM {db:Identifier}.tool_outputs AS o
WHERE o.output_id = {output_id:UUID}
LIMIT 1`,
  params: { db: 'the database', output_id: 'the output' },
};

/**
 * The content of a hash: whole when it fits `max_chars` code points, else its first `max_chars`
 * code points (a UTF-8 cut in SQL could split a character; the byte limit is applied after).
 */
export const OUTPUT_CONTENT: QuerySpec = {
  name: 'output_content',
  description: 'The stored content of one content_hash (output_contents), at most max_chars code points.',
  sql: `SELECT substringUTF8(content, 1, {max_chars:UInt64}) AS content
FROM {db:Identifier}.output_contents AS c
WHERE c.content_hash = {content_hash:String}
LIMIT 1`,
  params: { db: 'the database', content_hash: 'the content hash', max_chars: 'code points to return at most' },
};

/** Largest `max_bytes` a caller may ask for (an output's content is at most MAX_PACKET_BYTES at ingest). */
export const MAX_CONTENT_BYTES = 16 * 1024 * 1024;
/** Default `max_bytes`. */
export const DEFAULT_CONTENT_BYTES = 1024 * 1024;

/** What GET /v1/outputs/{output_id}/content answers. */
export const outputContentSchema = z.strictObject({
  output_id: z.string(),
  call_id: z.string(),
  tool_id: z.string(),
  content_type: contentTypeSchema,
  content_hash: z.string(),
  size_bytes: z.number().int().describe('UTF-8 bytes of the whole content'),
  created_at: z.string(),
  content: z.string().describe('the content as stored (JSON text for content_type json), at most max_bytes bytes of UTF-8, cut at a code point'),
  truncated: z.boolean().describe('true when content is a prefix of the stored content'),
});
/** The answer of {@link outputContent}. */
export type OutputContent = z.infer<typeof outputContentSchema>;

/** Parameters of {@link outputContent}. */
export interface OutputContentParams {
  outputId: string;
  maxBytes: number;
}

/** UTF-8 bytes of a string (pure: the web pages import this module's types). */
function utf8ByteLength(s: string): number {
  let n = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}

/** The longest prefix of `s` whose UTF-8 form has at most `max` bytes (cut at a code point). */
export function utf8Prefix(s: string, max: number): string {
  if (utf8ByteLength(s) <= max) return s;
  let bytes = 0;
  let end = 0;
  for (const ch of s) {
    const n = utf8ByteLength(ch);
    if (bytes + n > max) break;
    bytes += n;
    end += ch.length;
  }
  return s.slice(0, end);
}

/** The output and its content; null when no such output, or its content has expired. */
export async function outputContent(ch: StatementRunner, db: string, p: OutputContentParams, ctx: QueryContext): Promise<OutputContent | null> {
  const [meta] = await runQuery<Omit<OutputContent, 'content' | 'truncated' | 'created_at' | 'size_bytes'> & { size_bytes: number | string; created_ms: number | string }>(
    ch,
    OUTPUT_BY_ID,
    { db, output_id: p.outputId },
    ctx,
  );
  if (!meta) return null;
  // max_bytes code points hold at least max_bytes bytes: enough to cut the byte prefix from.
  const [row] = await runQuery<{ content: string }>(ch, OUTPUT_CONTENT, { db, content_hash: meta.content_hash, max_chars: p.maxBytes }, ctx);
  if (!row) return null;
  const size = Number(meta.size_bytes);
  const content = utf8Prefix(row.content, p.maxBytes);
  const { created_ms, ...rest } = meta;
  return { ...rest, size_bytes: size, created_at: new Date(Number(created_ms)).toISOString(), content, truncated: utf8ByteLength(content) < size };
}
