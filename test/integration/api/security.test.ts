/**
 * The read API as a hostile client sees it: an auth matrix over every route (never data without
 * the read scope), an injection corpus in every parameter (400, or an empty answer, and the
 * segments untouched), values that look like SQL stored and found again byte for byte, rate
 * limiting, server-side limits, and the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { READ_ROUTES } from '../../../api/read-route-table.ts';
import { AppError } from '../../../platform/errors.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { createReadQueries, type ReadQueries } from '../../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { count, doorOf } from '../../helpers/clickhouse.ts';
import { toolCall } from '../../helpers/packets.ts';
import { BOTH_KEY, INGEST_KEY, KEYS, READ_KEY, readHarness, type Harness } from '../../helpers/read-harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await readHarness({ seed: 11 });
});
afterAll(async () => h?.app.close());

const concrete = (url: string, id = 'search_web') => url.replace(/:[a-z_]+/g, encodeURIComponent(id));
const TABLES = ['tool_invocations', 'tool_outputs', 'output_contents', 'tool_workflows', 'quarantine', 'violations'];

const CORPUS = [
  "'; DROP TABLE tool_invocations; --",
  "' OR '1'='1",
  '{db:Identifier}',
  '{tool_id:String}',
  '`; SELECT * FROM system.users; `',
  '\\',
  "\\' OR 1=1 --",
  'ツール😀ü',
  '\u0000',
  '%00',
  'a\nb\tc',
  '__proto__',
  '${jndi:ldap://x}',
  '99999999999999999999999999999',
  '-1',
  '1e309',
  'NaN',
  'Infinity',
  '0x10',
  ' 5',
  'x'.repeat(3000),
];

/** True when an answer carries no rows of data. */
function isEmpty(body: Record<string, unknown>): boolean {
  for (const [k, v] of Object.entries(body)) {
    if (Array.isArray(v) && v.length > 0 && k !== 'tool_sequence') return false;
    if (k === 'invocations' && typeof v === 'number' && v !== 0) return false;
    if ((k === 'count' || k === 'total_cost_usd') && v !== 0) return false;
    if (v && typeof v === 'object' && !Array.isArray(v) && ['tool_frequency', 'error_distribution', 'frequent_errors', 'counts'].includes(k) && Object.keys(v).length > 0) return false;
  }
  return true;
}

describe('auth matrix', () => {
  it('answers 401/403 without data for every read route unless the key has the read scope', async () => {
    for (const route of READ_ROUTES) {
      const url = concrete(route.url);
      // Admitted: 200, or 404 where the path names a record that does not exist (a quarantine, output or call id).
      const admitted = route.notFound ? 404 : 200;
      const cases: Array<[Record<string, string>, number]> = [
        [{}, 401],
        [{ authorization: 'Bearer not-a-key-at-all-0000' }, 401],
        [{ authorization: 'Bearer ' }, 401],
        [{ 'x-api-key': `${READ_KEY}x` }, 401],
        [{ authorization: `Basic ${READ_KEY}` }, 401],
        [{ authorization: `Bearer ${INGEST_KEY}` }, 403],
        [{ authorization: `Bearer ${READ_KEY}` }, admitted],
        [{ 'x-api-key': READ_KEY }, admitted],
        [{ authorization: `Bearer ${BOTH_KEY}` }, admitted],
      ];
      for (const [headers, status] of cases) {
        const r = await h.app.inject({ method: 'GET', url, headers });
        expect(r.statusCode, `${url} ${JSON.stringify(headers)}`).toBe(status);
        if (status === 401 || status === 403) expect(Object.keys(r.json()).sort()).toEqual(['error', 'message']);
      }
    }
  });
});

describe('injection corpus', () => {
  it('answers 400 or an empty result for every hostile value in every parameter, and changes nothing', async () => {
    const before = await Promise.all(TABLES.map((t) => count(h.ch, h.db, t)));
    const reference = (await h.get('/v1/calls/failed?limit=1000')).body;
    let tried = 0;
    for (const route of READ_ROUTES) {
      const pathParams = route.params ? Object.keys(route.params.shape) : [];
      const queryParams = Object.keys(route.query.shape);
      for (const value of CORPUS) {
        const urls = [
          ...pathParams.map(() => concrete(route.url, value)),
          ...queryParams.map((q) => `${concrete(route.url)}?${q}=${encodeURIComponent(value)}`),
          `${concrete(route.url)}?unknown_param=${encodeURIComponent(value)}`,
        ];
        for (const url of urls) {
          const r = await h.get(url);
          tried++;
          expect([200, 400, 404, 414], url).toContain(r.status);
          // A search for a hostile value is a real search: it may find what holds it.
          const searched = route.url === '/v1/search' && url.includes('?q=');
          if (r.status === 200 && !searched) expect(isEmpty(r.body), `${url} → ${JSON.stringify(r.body).slice(0, 200)}`).toBe(true);
          else if (r.status === 400) expect(r.body.error).toBe('bad_request');
        }
      }
    }
    expect(tried).toBeGreaterThan(1000);
    expect(await Promise.all(TABLES.map((t) => count(h.ch, h.db, t)))).toEqual(before);
    expect((await h.get('/v1/calls/failed?limit=1000')).body).toEqual(reference);
  });

  it('refuses repeated, overflowing and malformed numbers with a message naming the parameter', async () => {
    for (const [q, param] of [
      ['limit=1&limit=2', 'limit'],
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['threshold_ms=9007199254740993', 'threshold_ms'],
      ['from=2026-13-45', 'from'],
      ['from=2026-11-22T00:00:00Z&to=2026-11-21T00:00:00Z', 'from must not be after to'],
    ] as const) {
      const url = q.startsWith('threshold') ? `/v1/calls/slow?${q}` : `/v1/calls/failed?${q}`;
      const r = await h.get(url);
      expect(r.status, url).toBe(400);
      expect(r.body.message).toContain(param);
    }
  });

  it('answers an empty range (from equal to to) with 200 and no rows on every read route that takes a window', async () => {
    // The instant of a stored call and of its output: an inclusive bound anywhere would return them.
    const [at] = await h.ch.query({ query: 'SELECT toUnixTimestamp64Milli(created_at) AS t, task_id, tool_id FROM {db:Identifier}.tool_invocations ORDER BY created_at LIMIT 1 OFFSET 5', query_params: { db: h.db }, format: 'JSONEachRow' }).then((r) => r.json<{ t: string; task_id: string; tool_id: string }>());
    const t = new Date(Number(at?.t)).toISOString();
    let tried = 0;
    for (const route of READ_ROUTES.filter((r) => 'from' in r.query.shape && 'to' in r.query.shape)) {
      const id = route.url.includes(':task_id') ? (at?.task_id ?? '') : (at?.tool_id ?? '');
      const url = `${concrete(route.url, id)}?from=${t}&to=${t}`;
      const r = await h.get(url);
      tried++;
      expect(r.status, `${url} → ${JSON.stringify(r.body).slice(0, 200)}`).toBe(route.url.includes(':quarantine_id') ? 404 : 200);
      if (r.status === 200) expect(isEmpty(r.body), `${url} → ${JSON.stringify(r.body).slice(0, 300)}`).toBe(true);
    }
    expect(tried).toBeGreaterThan(15);
    // The same instant as a one-millisecond range finds the call: the empty answers above are not for want of data.
    const one = await h.get(`/v1/tools/${encodeURIComponent(at?.tool_id ?? '')}/invocations?from=${t}&to=${new Date(Number(at?.t) + 1).toISOString()}`);
    expect(one.body.invocations.length).toBeGreaterThan(0);
  });

  it('binds values that look like SQL: such a tool and task are stored and found again exactly', async () => {
    const writer = createSegmentWriter({ clickhouse: doorOf(h.ch, h.db), maxPacketBytes: 1 << 20, dedupCacheEntries: 10, metrics: new MetricsRegistry(), logger: silentLogger() });
    const names = CORPUS.filter((v) => v.length <= 256 && v !== '\u0000');
    const packets = names.map((name, i) => toolCall({ tool_id: name, agent_id: name, created_at: new Date(Date.now() - 60_000 + i).toISOString() }, name));
    const outcomes = await writer.write(packets.map((p, index) => ({ raw: JSON.stringify(p), source: { kind: 'http', requestId: 'inj', index } })));
    expect(outcomes.every((o) => o.status === 'accepted')).toBe(true);
    for (const name of names) {
      const stats = await h.get(`/v1/tools/${encodeURIComponent(name)}/stats`);
      expect(stats.status, name).toBe(200);
      expect(stats.body.invocations, name).toBe(1);
      const task = await h.get(`/v1/tasks/${encodeURIComponent(name)}`);
      expect(task.body.invocations.map((i: { task_id: string }) => i.task_id), name).toEqual([name]);
      const agent = await h.get(`/v1/agents/${encodeURIComponent(name)}/tools`);
      expect(agent.body.tool_frequency, name).toEqual({ [name]: 1 });
    }
  });

  it('refuses an over-long path id before any query runs', async () => {
    expect((await h.get(`/v1/tools/${'y'.repeat(5000)}/stats`)).status).toBe(414);
    expect((await h.get(`/v1/tools/${'y'.repeat(300)}/stats`)).status).toBe(400);
  });
});

describe('limits and faults', () => {
  const app = (queries: ReadQueries, rateLimit = { perMinute: 0, burst: 1 }) =>
    buildApp({
      readiness: async () => ({ ready: true, checks: {} }),
      metrics: new MetricsRegistry(),
      apiKeys: KEYS,
      maxBodyBytes: 1 << 20,
      logger: silentLogger(),
      read: { queries, defaults: { windowDays: 90, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 }, rateLimit },
    });
  const auth = (key = READ_KEY) => ({ authorization: `Bearer ${key}` });

  it('rate-limits per key with 429 and Retry-After', async () => {
    const a = app(createReadQueries(doorOf(h.ch, h.db), h.db, DEFAULT_QUERY_CONTEXT), { perMinute: 60, burst: 3 });
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await a.inject({ url: '/v1/violations?limit=1', headers: auth() })).statusCode);
    expect(codes).toEqual([200, 200, 200, 429]);
    const limited = await a.inject({ url: '/v1/violations?limit=1', headers: auth() });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.json().error).toBe('too_many_requests');
    expect((await a.inject({ url: '/v1/violations?limit=1', headers: auth(BOTH_KEY) })).statusCode).toBe(200);
    await a.close();
  });

  it('answers 422 when a ClickHouse-side limit stops a query (max_result_rows)', async () => {
    const tiny = createReadQueries(doorOf(h.ch, h.db), h.db, { ...DEFAULT_QUERY_CONTEXT, limits: { maxExecutionSeconds: 5, maxResultRows: 2 } });
    const a = app(tiny);
    const r = await a.inject({ url: '/v1/calls/failed?limit=50', headers: auth() });
    expect(r.statusCode).toBe(422);
    expect(r.json().error).toBe('query_limit_exceeded');
    await a.close();
  });

  it('answers 503 with Retry-After when ClickHouse is unavailable', async () => {
    const down = new Proxy({} as ReadQueries, {
      get: () => async () => {
        throw new AppError('CLICKHOUSE_UNAVAILABLE', 'connection refused', { retryable: true });
      },
    });
    const a = app(down);
    const r = await a.inject({ url: '/v1/tools/search_web/stats', headers: auth() });
    expect(r.statusCode).toBe(503);
    expect(r.headers['retry-after']).toBe('5');
    await a.close();
  });
});

describe('OpenAPI', () => {
  it('documents every read route with its parameters and answer schema', async () => {
    const r = await h.app.inject('/openapi.json');
    expect(r.statusCode).toBe(200);
    const doc = r.json();
    expect(doc.openapi).toBe('3.1.0');
    for (const route of READ_ROUTES) {
      const op = doc.paths[route.url.replace(/:([a-z_]+)/g, '{$1}')]?.get;
      expect(op?.operationId).toBe(route.operationId);
      const names = op.parameters.map((p: { name: string }) => p.name).sort();
      expect(names).toEqual([...(route.params ? Object.keys(route.params.shape) : []), ...Object.keys(route.query.shape)].sort());
      const ref = op.responses['200'].content['application/json'].schema.$ref as string;
      expect(doc.components.schemas[ref.split('/').pop() as string].type).toBe('object');
    }
    expect(doc.paths['/v1/packets'].post).toBeDefined();
  });
});
