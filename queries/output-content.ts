/**
 * One output's full content (GET /v1/outputs/{output_id}/content): the output's metadata by its
 * id (tool_outputs' bloom filter on output_id), then its content by hash from output_contents
 * (stored once per content_hash, ordered by it: one granule). The tables are qualified in WHERE:
 * ClickHouse would otherwise read `output_id` as the SELECT's text alias. At most `maxBytes` of UTF-8 are
 * returned, cut at a code point, with `truncated` saying so.
 */
import { AppError } from '../platform/errors.ts';
import type { OutputContent } from '../schemas/answers.ts';
import { isoTime, runQuery, type QueryContext, type QuerySpec, type StatementRunner } from './sql.ts';

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
 * Each stored version is hashed where it is: the one whose SHA-256 is its content_hash is served.
 * The output's content_hash is covered by its audit log leaf, its content is not (it is stored
 * once per hash, in a table replacing versions): a version inserted afterwards with other content
 * under that hash is never served as the output's content.
 */
export const OUTPUT_CONTENT: QuerySpec = {
  name: 'output_content',
  description: 'The stored content of one content_hash (output_contents), at most max_chars code points, the version that hashes to it first.',
  sql: `SELECT substringUTF8(c.content, 1, {max_chars:UInt64}) AS content, toUInt8(lower(hex(SHA256(c.content))) = c.content_hash) AS genuine
FROM {db:Identifier}.output_contents AS c
WHERE c.content_hash = {content_hash:String}
ORDER BY genuine DESC
LIMIT 1`,
  params: { db: 'the database', content_hash: 'the content hash', max_chars: 'code points to return at most' },
};

/** Largest `max_bytes` a caller may ask for (an output's content is at most MAX_PACKET_BYTES at ingest). */
export const MAX_CONTENT_BYTES = 16 * 1024 * 1024;
/** Default `max_bytes`. */
export const DEFAULT_CONTENT_BYTES = 1024 * 1024;

/** Parameters of {@link outputContent}. */
export interface OutputContentParams {
  outputId: string;
  maxBytes: number;
}

/**
 * The longest prefix of `s` whose UTF-8 form has at most `max` bytes, cut before a character
 * (a byte that continues one, 10xxxxxx, is never the first one left out), and its length in bytes.
 */
export function utf8Prefix(s: string, max: number): { text: string; bytes: number } {
  const b = Buffer.from(s, 'utf8');
  if (b.length <= max) return { text: s, bytes: b.length };
  let cut = max;
  while (cut > 0 && ((b[cut] as number) & 0xc0) === 0x80) cut--;
  return { text: b.subarray(0, cut).toString('utf8'), bytes: cut };
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
  const [row] = await runQuery<{ content: string; genuine: number | string }>(ch, OUTPUT_CONTENT, { db, content_hash: meta.content_hash, max_chars: p.maxBytes }, ctx);
  if (!row) return null;
  if (Number(row.genuine) !== 1) {
    throw new AppError('INTEGRITY', `the stored content of output ${p.outputId} does not hash to its content_hash ${meta.content_hash}: it was changed after it was stored (tool-audit verify lists such contents)`, { retryable: false });
  }
  const size = Number(meta.size_bytes);
  const cut = utf8Prefix(row.content, p.maxBytes);
  const { created_ms, ...rest } = meta;
  return { ...rest, size_bytes: size, created_at: isoTime(created_ms), content: cut.text, truncated: cut.bytes < size };
}
