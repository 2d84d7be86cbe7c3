/**
 * The insert body of a round's quarantine records, as TabSeparated lines written straight into
 * one Buffer. A topic of rejected packets writes one record per packet, each holding the packet's
 * bytes; building them as rows, then one joined string, then its UTF-8 copy was the largest cost
 * of rejecting (and of the collector). Pure.
 */
import { tsvField } from '../platform/clickhouse/tsv.ts';
import { type QuarantineRow } from './rows.ts';
import { LineBuffer, tsvArray } from './row-lines.ts';

/** Insert columns of `quarantine`, in the order of {@link quarantineBody}'s fields. */
export const QUARANTINE_COLUMNS = ['source_key', 'source_kind', 'topic', 'partition', 'offset', 'request_id', 'packet_type', 'reason_code', 'reason', 'ids', 'raw', 'raw_encoding'] as const satisfies ReadonlyArray<keyof QuarantineRow>;

/**
 * A quarantine row to insert (the API's QuarantineRecord is a stored one as served). When
 * `rawBytes` is set, they are the packet's UTF-8 bytes, escaped into the body byte by byte, and
 * `row.raw` is left empty (decoding them into a string only to escape and encode it again is what
 * the collector spent most of its time on).
 */
export interface QuarantineInsert {
  row: QuarantineRow;
  rawBytes?: Uint8Array | undefined;
}

/** The TabSeparated body of the records (columns as {@link QUARANTINE_COLUMNS}). */
export function quarantineBody(records: Iterable<QuarantineInsert>): Buffer {
  const f = tsvField;
  const list = [...records];
  // Sized up front for the worst case (every byte escaped, every char 3 bytes): growing by
  // doubling copied the whole body about twice, and pages never written are never touched.
  const out = new LineBuffer(list.reduce((n, r) => n + (r.rawBytes?.length ?? r.row.raw.length * 3) * 2 + 512 + r.row.reason.length * 3, 1024));
  for (const { row: q, rawBytes } of list) {
    out.push(`${f(q.source_key)}\t${q.source_kind}\t${f(q.topic)}\t${q.partition}\t${q.offset}\t${f(q.request_id)}\t${f(q.packet_type)}\t${q.reason_code}\t${f(q.reason)}\t${tsvArray(q.ids)}\t`);
    if (rawBytes) out.pushTsvBytes(rawBytes);
    else out.push(f(q.raw));
    out.push(`\t${q.raw_encoding}\n`);
  }
  return out.buf.subarray(0, out.length);
}
