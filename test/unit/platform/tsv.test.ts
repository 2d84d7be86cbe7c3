/**
 * One TabSeparated codec: what ingest writes (rows.ts tsvField) reads back exactly through the
 * door's tsvUnescape, which the commit round uses for the calls it tells budgets of; and the
 * escapes ClickHouse itself writes (\b, \f, \') read as ClickHouse means them. Oracle: the
 * original strings, and ClickHouse's documented escapes.
 */
import { describe, expect, it } from 'vitest';
import { tsvUnescape } from '../../../platform/clickhouse/door.ts';
import { tsvField } from '../../../platform/clickhouse/tsv.ts';

describe('TabSeparated fields', () => {
  it('read back exactly what ingest wrote, backslashes and control characters included', () => {
    const alphabet = ['a', 'é', '\\', '\t', '\n', '\r', '\0', 'b', 'f', "'", 'N', '😀'];
    let seed = 7;
    const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % alphabet.length);
    for (let i = 0; i < 2000; i++) {
      const s = Array.from({ length: i % 17 }, () => alphabet[next()]).join('');
      expect(tsvUnescape(tsvField(s))).toBe(s);
    }
    for (const s of ['\\b', '\\\\', 'a\\nb', '\\N']) expect(tsvUnescape(tsvField(s))).toBe(s);
  });

  it("reads the escapes ClickHouse writes: \\b, \\f, \\' and \\\\", () => {
    expect(tsvUnescape('a\\bb\\fc\\\'d\\\\e\\tf')).toBe("a\bb\fc'd\\e\tf");
  });
});
