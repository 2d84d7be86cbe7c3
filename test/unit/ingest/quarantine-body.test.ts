/**
 * The quarantine body's byte-level escaping against the string-level one it replaces
 * (tsvField, then UTF-8): equal bytes for any text, including the five escaped characters,
 * multi-byte UTF-8 and runs of escapes at either end.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quarantineBody } from '../../../ingest/quarantine-body.ts';
import { tsvField } from '../../../platform/clickhouse/tsv.ts';
import { type QuarantineRow } from '../../../ingest/rows.ts';
import { LineBuffer } from '../../../ingest/row-lines.ts';

const awkward = fc.string({ unit: fc.constantFrom('\t', '\n', '\r', '\0', '\\', 'a', '"', 'é', '€', '😀', '{', ' '), maxLength: 60 });
const anyText = fc.oneof(awkward, fc.string({ unit: 'grapheme', maxLength: 60 }));

describe('quarantine body', () => {
  it('escapes UTF-8 bytes exactly as tsvField escapes their text', () => {
    fc.assert(
      fc.property(fc.array(anyText, { maxLength: 8 }), (texts) => {
        const out = new LineBuffer(16);
        for (const t of texts) out.pushTsvBytes(Buffer.from(t, 'utf8'));
        expect(out.buf.subarray(0, out.length).toString('utf8')).toBe(texts.map((t) => tsvField(t)).join(''));
      }),
      { numRuns: 2000 },
    );
  });

  it('writes the same record from the bytes as from the text', () => {
    fc.assert(
      fc.property(anyText, anyText, (raw, reason) => {
        const row: QuarantineRow = { source_key: 'k:t:0:1', source_kind: 'kafka', topic: 't', partition: 0, offset: '1', request_id: '', packet_type: 'tool_call', reason_code: 'schema', reason, ids: ["it's"], raw, raw_encoding: 'utf8' };
        const fromText = quarantineBody([{ row }]);
        const fromBytes = quarantineBody([{ row: { ...row, raw: '' }, rawBytes: Buffer.from(raw, 'utf8') }]);
        expect(fromBytes.toString('utf8')).toBe(fromText.toString('utf8'));
      }),
      { numRuns: 1000 },
    );
  });
});
