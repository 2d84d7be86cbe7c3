/**
 * Values rendered into statements (the embedded default, literals.ts) against the same values
 * bound as query parameters (the engine's own binding, the oracle): hostile strings in every
 * placeholder type the code uses, then in every user input of every read route.
 */
import { describe, expect, it } from 'vitest';
import { createClickHouseDoor, type ClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { AppError } from '../../../platform/errors.ts';
import { freshDatabase } from '../../helpers/clickhouse.ts';
import { readApp } from '../../helpers/read-app.ts';
import { KEYS, READ_KEY, readHarness } from '../../helpers/read-harness.ts';

const HOSTILE = [
  "'",
  "\\'",
  '\\',
  "x' OR '1'='1",
  "'); DROP TABLE t; --",
  '}',
  '{db:Identifier}',
  'a\nb\r\tc',
  'nul\0byte',
  'bad \uD800 surrogate \uFFFD',
  '`name`',
  '€ ✓ 🙂',
  'x'.repeat(1 << 20),
];

/**
 * What a statement gave: its rows, or that it was refused (as an AppError). Not the engine's
 * code: a value the engine cannot parse is refused by the bound path while binding and by the
 * rendered one in the CAST, with neighbouring codes (130 vs 32 for an empty UInt8 in an array).
 */
async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return { rows: await run() };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { refused: true };
  }
}

/** Stands for the bytes C3 28 FF FE in a URL (not UTF-8). */
const INVALID_UTF8 = '<invalid utf-8>';

const TYPES: Array<[string, unknown[]]> = [
  ['String', ['plain', '']],
  ['Nullable(String)', [null, 'v']],
  ['UUID', ['0190b3f2-7c1a-7d2e-8f00-0123456789ab']],
  ["DateTime64(3, 'UTC')", ['2026-11-25 10:11:12.345', '2026-11-25 10:11:12']],
  ['UInt8', [0, 255]],
  ['UInt32', [50, 4294967295]],
  ['UInt64', [0, 18446744073709551615n, '18446744073709551615']],
  ['Int64', [-5, 9007199254740991]],
  ['Float64', [0.1, -2e-7, 1.5e-300, 123.25]],
  ['Bool', [true, false]],
  ['Array(String)', [[], ['a', 'b']]],
  ['Array(UUID)', [['0190b3f2-7c1a-7d2e-8f00-0123456789ab']]],
  ['Array(UInt64)', [[1, 2n, 18446744073709551615n]]],
  ['Array(Int64)', [[-1, 0, 1]]],
  ['Array(UInt8)', [[0, 1, 255]]],
  ['Array(Bool)', [[true, false]]],
];

describe('rendered literals mean what bound parameters mean', () => {
  it('gives the bound answer (or the same refusal) for valid and hostile values of every placeholder type', async () => {
    const { ch, db } = await freshDatabase('lit');
    const rendered = createClickHouseDoor(ch, db, { parameters: 'render' });
    const bound = createClickHouseDoor(ch, db, { parameters: 'bind' });
    let answered = 0;
    for (const [type, valid] of TYPES) {
      const values = [...valid, ...HOSTILE, ...(type.startsWith('Array(') ? HOSTILE.map((h) => [h, 'ok']) : [])];
      for (const v of values) {
        const sql = `SELECT {v:${type}} AS v, toTypeName({v:${type}}) AS t`;
        const mine = await outcome(() => rendered.select(sql, { v }));
        expect(mine, `${type} ${String(v).slice(0, 60)}`).toEqual(await outcome(() => bound.select(sql, { v })));
        if ('rows' in (mine as object)) answered++;
      }
    }
    // Every valid value and every hostile String (as String, Nullable(String), in an Array(String)) went
    // through: the comparison is not only of refusals.
    expect(answered).toBe(TYPES.reduce((n, [, v]) => n + v.length, 0) + HOSTILE.length * 3);
  });

  it('key sets read back exactly the keys given, hostile ones included, on both paths and beside bound values', async () => {
    const { ch, db } = await freshDatabase('lit');
    const uuids = Array.from({ length: 20_000 }, (_, i) => `0190b3f2-7c1a-7d2e-8f00-${i.toString(16).padStart(12, '0')}`);
    // The statement outgrows the default max_query_size (256 KiB): the door sizes it.
    const strings = [...HOSTILE.filter((h) => !h.includes('\uD800')), ...Array.from({ length: 20_000 }, (_, i) => `task-${i}`)];
    for (const parameters of ['render', 'bind'] as const) {
      const door = createClickHouseDoor(ch, db, { parameters });
      const got = await door.select<{ k: string }>('SELECT toString(u) AS k FROM (SELECT k AS u FROM {ids:KeySet(UUID)}) WHERE u != {never:UUID}', { ids: uuids, never: '00000000-0000-0000-0000-000000000000' });
      expect(got.map((r) => r.k), parameters).toEqual(uuids);
      const texts = await door.select<{ k: string }>('SELECT k FROM {keys:KeySet(String)} WHERE length(k) >= {min:UInt8}', { keys: strings, min: 0 });
      expect(texts.map((r) => r.k), parameters).toEqual(strings);
      await expect(door.select('SELECT 1 WHERE 1 IN {ids:KeySet(UUID)}', { ids: ["x'); DROP TABLE t; --"] }), parameters).rejects.toThrow(/not a UUID/);
    }
  });

  it('stores and finds hostile strings by equality, IN and identifiers alike on both paths', async () => {
    const { ch, db } = await freshDatabase('lit');
    const rendered = createClickHouseDoor(ch, db, { parameters: 'render' });
    const bound = createClickHouseDoor(ch, db, { parameters: 'bind' });
    // No backslash: chdb-node sends a bound Identifier TSV-escaped and the engine does not unescape
    // it, so a bound a\\b names a table a\\\\b (the rendered one names a\\b, as written).
    const weird = "we'ird `table` }{x:String}";
    await rendered.command('CREATE TABLE {db:Identifier}.hostile (s String) ENGINE = MergeTree ORDER BY s');
    await rendered.command('CREATE TABLE {db:Identifier}.{t:Identifier} (s String) ENGINE = MergeTree ORDER BY s', { t: weird });
    await bound.command('INSERT INTO {db:Identifier}.hostile SELECT arrayJoin({ss:Array(String)})', { ss: HOSTILE });
    await bound.command('INSERT INTO {db:Identifier}.{t:Identifier} SELECT s FROM {db:Identifier}.hostile', { t: weird });
    for (const door of [rendered, bound] as ClickHouseDoor[]) {
      for (const t of ['hostile', weird]) {
        for (const s of HOSTILE) {
          const eq = await door.select<{ n: number }>('SELECT count() AS n FROM {db:Identifier}.{t:Identifier} WHERE s = {s:String}', { t, s });
          expect(Number(eq[0]?.n), JSON.stringify(s).slice(0, 40)).toBe(1);
        }
        const inList = await door.select<{ n: number }>('SELECT count() AS n FROM {db:Identifier}.{t:Identifier} WHERE s IN {ss:Array(String)}', { t, ss: HOSTILE });
        expect(Number(inList[0]?.n)).toBe(HOSTILE.length);
      }
    }
  });

  it('answers every read route alike with hostile path, query and cursor values', async () => {
    const h = await readHarness();
    const bound = readApp({ door: createClickHouseDoor(h.ch, h.db, { parameters: 'bind' }), db: h.db, keys: KEYS });
    const rendered = h.app; // the harness's door renders (the embedded default)
    const doc = (await rendered.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, { get?: { parameters?: Array<{ in: string; name: string; schema?: { type?: string; enum?: unknown } }> } }> };
    const auth = { authorization: `Bearer ${READ_KEY}` };
    const ask = async (url: string) => {
      const [a, b] = await Promise.all([rendered.inject({ method: 'GET', url, headers: auth }), bound.inject({ method: 'GET', url, headers: auth })]);
      // Each answer has a request id of its own; the rest must be the same.
      const body = (r: { body: string }) => r.body.replace(/"request_id":"[^"]*"/, '');
      expect({ url: url.slice(0, 120), status: a.statusCode, body: body(a) }).toEqual({ url: url.slice(0, 120), status: b.statusCode, body: body(b) });
      return a.statusCode;
    };
    const real = { tool_id: h.workload.invocations[0]?.tool_id ?? 'x', task_id: h.workload.invocations.find((c) => c.task_id)?.task_id ?? 'x', agent_id: h.workload.invocations[0]?.agent_id ?? 'x' };
    const statuses = new Map<number, number>();
    const hostile = HOSTILE.filter((s) => s.length < 4096); // a 1 MiB URL is refused before any query
    // Every byte percent-encoded (a lone surrogate as U+FFFD), and bytes that are no UTF-8 at all.
    const pct = (v: string) => (v === INVALID_UTF8 ? '%C3%28%FF%FE' : [...Buffer.from(v, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''));
    hostile.push(INVALID_UTF8);
    let routes = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      const params = item.get?.parameters ?? [];
      if (!item.get || path === '/openapi.json' || path === '/metrics') continue;
      routes++;
      const fill = (p: string, v: string) => p.replace(/\{(\w+)\}/g, (_m, n: string) => pct(n === 'tool_id' || n === 'task_id' || n === 'agent_id' ? (n === p.match(/\{(\w+)\}/)?.[1] ? v : real[n as keyof typeof real]) : v));
      const stringParams = params.filter((p) => p.schema?.type === 'string' && !p.schema.enum && p.name !== 'from' && p.name !== 'to' && p.name !== 'cursor');
      for (const p of stringParams) {
        for (const v of [...hostile, p.in === 'path' ? (real as Record<string, string>)[p.name] ?? 'x' : 'x']) {
          const base = p.in === 'path' ? fill(path, v) : fill(path, (real as Record<string, string>)[path.match(/\{(\w+)\}/)?.[1] ?? ''] ?? 'x');
          const url = p.in === 'query' ? `${base}?${p.name}=${pct(v)}` : base;
          const s = await ask(url);
          statuses.set(s, (statuses.get(s) ?? 0) + 1);
        }
      }
      // Cursors: a real one of the route's first page, its string keys replaced by hostile strings.
      if (params.some((p) => p.name === 'cursor')) {
        const first = fill(path, (real as Record<string, string>)[path.match(/\{(\w+)\}/)?.[1] ?? ''] ?? 'x');
        const page = (await rendered.inject({ method: 'GET', url: `${first}${first.includes('?') ? '&' : '?'}limit=1`, headers: auth })).json() as { next_cursor?: string | null };
        if (!page.next_cursor) continue;
        const [tag, key] = JSON.parse(Buffer.from(page.next_cursor, 'base64url').toString('utf8')) as [string, unknown[]];
        for (const v of hostile) {
          const swapped = key.map((k) => (typeof k === 'string' && !/^[0-9a-f-]{36}$/.test(k) ? v : Array.isArray(k) ? k.map(() => v) : k));
          const cursor = Buffer.from(JSON.stringify([tag, swapped]), 'utf8').toString('base64url');
          const s = await ask(`${first}${first.includes('?') ? '&' : '?'}limit=2&cursor=${cursor}`);
          statuses.set(s, (statuses.get(s) ?? 0) + 1);
        }
      }
    }
    expect(routes).toBeGreaterThanOrEqual(20);
    // Most asks reached a query and were answered (not all refused before any SQL ran).
    expect(statuses.get(200) ?? 0).toBeGreaterThan(100);
  }, 240_000);
});
