/**
 * On the embedded engine the door's reads go to chDB's own query call, not through the client's
 * result stream. The answers, the settings and the failures must be those of the client's path:
 * the oracle here is @clickhouse/client itself on the same connection, and the values as written.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { describe, expect, it } from 'vitest';
import { createClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { rawStatement } from '../../../platform/clickhouse/door-send.ts';
import { freshDatabase } from '../../helpers/clickhouse.ts';

type Extension = { queryAsync: (sql: string, opts?: unknown) => Promise<unknown> };
const extensionOf = (ch: ClickHouseClient): Extension | undefined => (ch as unknown as { connection?: { chdb?: Extension } }).connection?.chdb;

// Every character TabSeparated and JSON escape, quotes of SQL, and text beyond ASCII.
const HOSTILE = ['plain', "it's", 'back\\slash', 'tab\there', 'new\nline', 'cr\rhere', 'nul\0byte', '"quoted"', 'ünïcødé 漢字 🙂', '\\N', ''];

/** Counts chDB's own query calls while `run` runs (the door found the extension at construction). */
async function countingRaw<T>(ch: ClickHouseClient, run: (calls: () => number) => Promise<T>): Promise<T> {
  const ext = extensionOf(ch);
  if (!ext) return run(() => 0);
  const original = ext.queryAsync;
  let n = 0;
  ext.queryAsync = (sql, opts) => {
    n++;
    return original(sql, opts);
  };
  try {
    return await run(() => n);
  } finally {
    ext.queryAsync = original;
  }
}

describe("the door's reads on the embedded engine", () => {
  it('answers as the client does, hostile text included, and goes straight to chDB', async () => {
    const { ch, db } = await freshDatabase('rawq');
    await ch.command({ query: `CREATE TABLE ${db}.raw_t (i UInt32, s String, n Nullable(Float64), a Array(String)) ENGINE = MergeTree ORDER BY i` });
    const written = HOSTILE.map((s, i) => ({ i, s, n: i % 3 === 0 ? null : i / 7, a: [s, String(i)] }));
    await ch.insert({ table: `${db}.raw_t`, values: written, format: 'JSONEachRow' });
    const sql = 'SELECT i, s, n, a FROM {db:Identifier}.raw_t ORDER BY i';
    const byClient = await (await ch.query({ query: `SELECT i, s, n, a FROM ${db}.raw_t ORDER BY i`, format: 'JSONEachRow' })).json();
    await countingRaw(ch, async (calls) => {
      const door = createClickHouseDoor(ch, db);
      const before = calls();
      expect(await door.select(sql)).toEqual(written);
      expect(byClient).toEqual(written);
      expect(await door.read({ name: 'raw', sql }, {}, { limits: { maxExecutionSeconds: 10, maxResultRows: 100 } })).toEqual(written);
      // TabSeparated fields come back unescaped: the text as written.
      expect((await door.selectFields('SELECT s FROM {db:Identifier}.raw_t ORDER BY i')).map((f) => f[0])).toEqual(HOSTILE);
      // Values rendered into the statement find the same rows.
      for (const s of HOSTILE) expect(await door.select<{ i: number }>('SELECT i FROM {db:Identifier}.raw_t WHERE s = {s:String}', { s })).toEqual([{ i: HOSTILE.indexOf(s) }]);
      if (extensionOf(ch)) expect(calls() - before).toBe(3 + HOSTILE.length);
    });
  });

  it('applies settings as the client would, keeps a trailing semicolon or comment harmless, and fails alike', async () => {
    const { ch, db } = await freshDatabase('rawq');
    const door = createClickHouseDoor(ch, db);
    const bound = createClickHouseDoor(ch, db, { parameters: 'bind' });
    const comment = "quote ' backslash \\ tab \t done";
    const messages: string[] = [];
    for (const d of [door, bound]) {
      expect(await d.select("SELECT getSetting('max_threads') AS t", {}, { max_threads: 3 })).toEqual([{ t: 3 }]);
      expect(await d.select("SELECT getSetting('log_comment') AS c", {}, { log_comment: comment })).toEqual([{ c: comment }]);
      expect(await d.select('SELECT 1 AS one;;')).toEqual([{ one: 1 }]);
      expect(await d.select('SELECT 2 AS two -- the reason\n')).toEqual([{ two: 2 }]);
      const wrong = await d.select('SELECT no_such_column FROM {db:Identifier}.no_table_here').catch((e: unknown) => e);
      expect(wrong).toMatchObject({ code: 'CLICKHOUSE_UNAVAILABLE', retryable: true });
      const syntax = await d.select('SELEC 1').catch((e: unknown) => e);
      expect(syntax).toMatchObject({ code: 'CLICKHOUSE_QUERY_FAILED', retryable: false });
      expect(String((syntax as Error).message)).toContain('query (SELEC 1)');
      messages.push(String((wrong as Error).message), String((syntax as Error).message));
    }
    // The engine's text reaches the error map parsed alike on both paths (no `Code: N. DB::Exception:` on one only).
    expect(messages.slice(0, 2)).toEqual(messages.slice(2));
    for (const m of messages) expect(m).not.toContain('DB::Exception');
  });

  it('writes settings before the statement and the format after it', () => {
    expect(rawStatement('SELECT 1;\n', 'JSONEachRow', undefined)).toBe('SELECT 1 \nFORMAT JSONEachRow');
    expect(rawStatement(' SELECT 1 ', 'TabSeparated', { max_threads: 2, log_comment: "a'b\\c", use_uncompressed_cache: true as never, readonly: undefined })).toBe(
      "SET max_threads = 2; SET log_comment = 'a\\'b\\\\c'; SET use_uncompressed_cache = 1; SELECT 1 \nFORMAT TabSeparated",
    );
    expect(() => rawStatement('SELECT 1', 'JSONEachRow', { 'max_threads = 1; DROP TABLE x; SET a': 1 } as never)).toThrow(/invalid name/);
  });
});
