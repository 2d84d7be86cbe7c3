/**
 * The insert body of a round's quarantine records, as TabSeparated lines written straight into
 * one Buffer. A topic of rejected packets writes one record per packet, each holding the packet's
 * bytes: as JSON rows (quoting the packet's own quotes), then one joined string, then its UTF-8
 * copy, that was the largest cost of rejecting (and of the collector). Pure.
 */
import { LineBuffer, tsvArray, tsvField, type QuarantineRow } from './rows.ts';

/** Insert columns of `quarantine`, in the order of {@link quarantineBody}'s fields. */
export const QUARANTINE_COLUMNS = ['source_key', 'source_kind', 'topic', 'partition', 'offset', 'request_id', 'packet_type', 'reason_code', 'reason', 'ids', 'raw', 'raw_encoding'] as const satisfies ReadonlyArray<keyof QuarantineRow>;

/** A record and, when the transport held them, the packet's UTF-8 bytes (equal to `row.raw`). */
export interface QuarantineRecord {
  row: QuarantineRow;
  rawBytes?: Uint8Array | undefined;
}

// Bytes TabSeparated escapes: tab, newline, carriage return, NUL and backslash.
const ESCAPED_BYTES = [0x09, 0x0a, 0x0d, 0x00, 0x5c];
const needsEscape = (b: Uint8Array): boolean => ESCAPED_BYTES.some((c) => b.indexOf(c) >= 0);

/** The TabSeparated body of the records (columns as {@link QUARANTINE_COLUMNS}). */
export function quarantineBody(records: Iterable<QuarantineRecord>): Buffer {
  const f = tsvField;
  const out = new LineBuffer(1 << 20);
  for (const { row: q, rawBytes } of records) {
    out.push(`${f(q.source_key)}\t${q.source_kind}\t${f(q.topic)}\t${q.partition}\t${q.offset}\t${f(q.request_id)}\t${f(q.packet_type)}\t${q.reason_code}\t${f(q.reason)}\t${tsvArray(q.ids)}\t`);
    // The packet's own bytes go in as they are when nothing in them needs escaping (nearly always).
    if (rawBytes && q.raw_encoding === 'utf8' && !needsEscape(rawBytes)) out.pushBytes(rawBytes);
    else out.push(f(q.raw));
    out.push(`\t${q.raw_encoding}\n`);
  }
  return out.buf.subarray(0, out.length);
}
