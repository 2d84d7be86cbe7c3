/**
 * The edge as an attacker holding a wrong key (or an ingest key) finds it, on embedded
 * ClickHouse: guesses are throttled per address on every route and a right key is not confirmed
 * during the lock-out; every route, ingest included, is limited per key; /metrics needs a key;
 * a 503 or 422 says which dependency or limit, never the fault's own text. Oracles: the limits
 * set here (counts of 401/429 expected from them) and the error texts the engine produced,
 * found in the log and not in the body.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import type { ApiKey } from '../../../platform/config.ts';
import { createClickHouse } from '../../../platform/clickhouse/client.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { createReadQueries } from '../../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { doorOf, freshDatabase } from '../../helpers/clickhouse.ts';
import { toolCall } from '../../helpers/packets.ts';

const INGEST_KEY = 'edge-ingest-key-0123456789';
const READ_KEY = 'edge-read-key-0123456789ab';
const METRICS_KEY = 'edge-metrics-key-012345678';
const KEYS: ApiKey[] = [
  { key: INGEST_KEY, scopes: ['ingest'] },
  { key: READ_KEY, scopes: ['read'] },
  { key: METRICS_KEY, scopes: ['metrics'] },
];
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

let ch: ClickHouseClient;
let db: string;
beforeAll(async () => {
  ({ ch, db } = await freshDatabase('edge'));
});

/** An app on the fresh database with the edge's limits at `edge`, and its log lines. */
function edgeApp(edge: { perMinute: number; burst: number; authFailuresPerMinute: number; now?: () => number }, limits = DEFAULT_QUERY_CONTEXT.limits) {
  let log = '';
  const logger = pino({ level: 'info' }, new Writable({ write: (c: Buffer, _e, cb) => ((log += c.toString()), cb()) }));
  const metrics = new MetricsRegistry();
  const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 100, metrics, logger });
  const app = buildApp({
    ingest: { submit: (p) => writer.write(p) },
    readiness: async () => ({ ready: true, checks: {} }),
    metrics,
    apiKeys: KEYS,
    maxBodyBytes: 1 << 20,
    logger,
    edgeLimits: edge,
    read: { queries: createReadQueries(doorOf(ch, db), db, { ...DEFAULT_QUERY_CONTEXT, limits }), defaults: { windowDays: 90, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 }, rateLimit: { perMinute: 0, burst: 1 } },
  });
  return { app, log: () => log };
}

const packets = (n: number, over: Record<string, unknown> = {}) => JSON.stringify(Array.from({ length: n }, () => toolCall({ created_at: new Date().toISOString(), ...over }, 'edge-task')));

describe('the edge', () => {
  let app: FastifyInstance;
  afterAll(async () => app?.close());

  it('locks out an address that guessed keys, on every route, a right key included; other addresses go on', async () => {
    let t = 0;
    ({ app } = edgeApp({ perMinute: 0, burst: 1, authFailuresPerMinute: 5, now: () => t }));
    const from = (remoteAddress: string, url: string, key: string, method: 'GET' | 'POST' = 'GET') =>
      app.inject({ method, url, remoteAddress, headers: { ...bearer(key), 'content-type': 'application/json' }, ...(method === 'POST' ? { payload: packets(1) } : {}) }).then((r) => r.statusCode);
    const guesses: number[] = [];
    for (let i = 0; i < 5; i++) guesses.push(await from('203.0.113.7', i % 2 ? '/v1/packets' : '/v1/violations', `wrong-key-${i}-0123456789`, i % 2 ? 'POST' : 'GET'));
    expect(guesses).toEqual([401, 401, 401, 401, 401]);
    // Spent: every route answers 429, the right key too, before the key is looked at.
    const locked = await app.inject({ url: '/v1/violations', remoteAddress: '203.0.113.7', headers: bearer(READ_KEY) });
    expect(locked.statusCode).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(await from('203.0.113.7', '/v1/packets', INGEST_KEY, 'POST')).toBe(429);
    expect(await from('203.0.113.7', '/healthz', READ_KEY)).toBe(429);
    expect(await from('198.51.100.2', '/v1/violations', READ_KEY)).toBe(200);
    expect(await from('198.51.100.2', '/v1/packets', INGEST_KEY, 'POST')).toBe(200);
    // A failure refills in 60 / 5 = 12 s.
    t += 12_000;
    expect(await from('203.0.113.7', '/v1/violations', READ_KEY)).toBe(200);
    await app.close();
  });

  it('limits every route per key, ingest included; another key is not held back', async () => {
    ({ app } = edgeApp({ perMinute: 60, burst: 3, authFailuresPerMinute: 0, now: () => 0 }));
    const post = (key: string) => app.inject({ method: 'POST', url: '/v1/packets', payload: packets(2), headers: { ...bearer(key), 'content-type': 'application/json' } });
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push((await post(INGEST_KEY)).statusCode);
    expect(codes).toEqual([200, 200, 200, 429]);
    expect((await app.inject({ url: '/v1/violations', headers: bearer(READ_KEY) })).statusCode).toBe(200);
    await app.close();
  });

  it('serves /metrics to a metrics or read key only; a metrics key reads no data', async () => {
    ({ app } = edgeApp({ perMinute: 0, burst: 1, authFailuresPerMinute: 0 }));
    expect((await app.inject('/metrics')).statusCode).toBe(401);
    expect((await app.inject({ url: '/metrics', headers: bearer(INGEST_KEY) })).statusCode).toBe(403);
    const scraped = await app.inject({ url: '/metrics', headers: bearer(METRICS_KEY) });
    expect(scraped.statusCode).toBe(200);
    expect(scraped.body).toMatch(/tool_audit_http_request_seconds_count/);
    expect((await app.inject({ url: '/metrics', headers: bearer(READ_KEY) })).statusCode).toBe(200);
    expect((await app.inject({ url: '/v1/violations', headers: bearer(METRICS_KEY) })).statusCode).toBe(403);
    await app.close();
  });

  it('answers a query limit and an unreachable ClickHouse with a code and a request id, the engine text in the log only', async () => {
    const edge = { perMinute: 0, burst: 1, authFailuresPerMinute: 0 };
    const w = await app.close().then(() => edgeApp(edge, { maxExecutionSeconds: 5, maxResultRows: 1 }));
    app = w.app;
    const failed = await app.inject({ method: 'POST', url: '/v1/packets', payload: packets(5, { status: 'error', error: 'boom' }), headers: { ...bearer(INGEST_KEY), 'content-type': 'application/json' } });
    expect(failed.json()).toMatchObject({ accepted: 5 });
    const limited = await app.inject({ url: '/v1/calls/failed?limit=50', headers: bearer(READ_KEY) });
    expect(limited.statusCode).toBe(422);
    const body = limited.json() as Record<string, string>;
    expect(body.error).toBe('query_limit_exceeded');
    // What the engine said is in the log, under this request: none of it in the answer.
    const logged = w.log().split('\n').find((l) => l.includes('query limit exceeded') && l.includes(body.request_id ?? '-'));
    expect(logged).toMatch(/failed_calls exceeded a server-side limit \(Limit for result exceeded, max rows: 1/);
    for (const leak of ['SELECT', 'Code:', db, 'failed_calls', 'max rows']) expect(limited.body).not.toContain(leak);
    // ClickHouse at an address nothing listens on: 503, the fault named by its code.
    const down = await createClickHouse({ url: 'http://127.0.0.1:9', database: db, user: undefined, password: undefined, dataDir: '' });
    await app.close();
    const off = buildApp({
      readiness: async () => ({ ready: true, checks: {} }),
      metrics: new MetricsRegistry(),
      apiKeys: KEYS,
      maxBodyBytes: 1 << 20,
      logger: pino({ level: 'silent' }),
      read: { queries: createReadQueries(doorOf(down, db), db, DEFAULT_QUERY_CONTEXT), defaults: { windowDays: 90, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 }, rateLimit: { perMinute: 0, burst: 1 } },
    });
    const r = await off.inject({ url: '/v1/violations', headers: bearer(READ_KEY) });
    expect(r.statusCode).toBe(503);
    const b = r.json() as Record<string, string>;
    expect(b).toMatchObject({ error: 'unavailable', code: expect.stringMatching(/^[A-Z_]+$/), request_id: expect.any(String) });
    for (const leak of ['127.0.0.1', 'ECONNREFUSED', ':9']) expect(r.body).not.toContain(leak);
    await off.close();
    await down.close();
  });
});
