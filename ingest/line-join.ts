/**
 * Insert bodies cut from the decoder's line buffers: the TabSeparated lines of the rows a round
 * writes, copied once into one Buffer. Pure.
 */
import { tsvField } from '../platform/clickhouse/tsv.ts';
import type { LineBuffer } from './row-lines.ts';

/** Lines [start, end) of a decoder line buffer (one row, its newline included). */
export type BodyPart = { lines: LineBuffer; start: number; end: number };

/** One Buffer of the given line ranges, adjacent ranges of a buffer copied as one. */
export function joinParts(parts: BodyPart[]): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  let cur: BodyPart | undefined;
  for (const p of parts) {
    if (cur && cur.lines === p.lines && cur.end === p.start) {
      cur.end = p.end;
      continue;
    }
    if (cur) {
      chunks.push(cur.lines.buf.subarray(cur.start, cur.end));
      total += cur.end - cur.start;
    }
    cur = { lines: p.lines, start: p.start, end: p.end };
  }
  if (cur) {
    chunks.push(cur.lines.buf.subarray(cur.start, cur.end));
    total += cur.end - cur.start;
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
}

/** Lines of the given ranges, each with one more TabSeparated field before its newline. */
export function joinWithField(keyed: Array<{ key: string; part: BodyPart }>, field: (key: string) => string | null): Buffer {
  // One buffer, sized first: a Buffer per line (and a concat) costs more than the copying.
  const extras = keyed.map(({ key }) => `\t${tsvField(field(key))}\n`);
  let total = 0;
  keyed.forEach(({ part }, i) => (total += part.end - 1 - part.start + Buffer.byteLength(extras[i] as string)));
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  keyed.forEach(({ part }, i) => {
    at += part.lines.buf.copy(out, at, part.start, part.end - 1);
    at += out.write(extras[i] as string, at);
  });
  return out;
}
