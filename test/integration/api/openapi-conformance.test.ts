/* eslint-disable @typescript-eslint/no-explicit-any -- the OpenAPI document is walked as JSON */
/**
 * The published contract says what the API enforces: every parameter's declared
 * constraints are fed back to the server — each bound, and one past it; a string at its
 * maxLength, one longer, and one breaking its pattern — and the answer must agree with the
 * declaration (inside: not 400; outside: 400 naming the parameter). Methods the spec does not list
 * answer 405 with Allow; the longest request the spec allows fits the server's limits (no 431);
 * POST /v1/packets answers what its declared schema says.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { servedRoutes } from '../../../api/method-not-allowed.ts';
import { createBudgetService } from '../../../api/budgets/service.ts';
import { packetAnswerSchema } from '../../../api/packet-answer-schema.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { quarantineByIds, quarantineList } from '../../../queries/quarantine.ts';
import { createReadQueries } from '../../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { doorOf, freshDatabase } from '../../helpers/clickhouse.ts';
import { dependency, outputArtifact, toolCall } from '../../helpers/packets.ts';
import { BOTH_KEY, KEYS } from '../../helpers/read-harness.ts';

let app: FastifyInstance;
let spec: any;
let base: string;
const auth = { authorization: `Bearer ${BOTH_KEY}` };
// output_id names an output stored in beforeAll: a query parameter's valid values must find it.
const STORED_OUTPUT = outputArtifact(randomUUID(), 'a conformance output');
const PATH_VALUES: Record<string, string> = { tool_id: 'search_web', agent_id: 'L', task_id: 'task-conf', output_id: STORED_OUTPUT.output.output_id, from_size: '1', to_size: '2', call_id: STORED_OUTPUT.output.call_id };

beforeAll(async () => {
  const { ch, db } = await freshDatabase('conf');
  const metrics = new MetricsRegistry();
  const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 100, metrics, logger: silentLogger() });
  const budgets = createBudgetService({ clickhouse: doorOf(ch, db), logger: silentLogger(), ctx: DEFAULT_QUERY_CONTEXT, reservationTimeoutMs: 60_000, decisionsFlushMs: 10 });
  await budgets.start();
  await writer.write([{ raw: JSON.stringify(STORED_OUTPUT), source: { kind: 'http', requestId: 'conf', index: 0 } }]);
  app = buildApp({
    ingest: { submit: (p) => writer.write(p) },
    read: {
      queries: createReadQueries(doorOf(ch, db), db, DEFAULT_QUERY_CONTEXT),
      defaults: { windowDays: 90, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 },
      rateLimit: { perMinute: 0, burst: 1 },
    },
    readiness: async () => ({ ready: true, checks: {} }),
    metrics,
    apiKeys: KEYS,
    maxBodyBytes: 1 << 20,
    logger: silentLogger(),
    manifests: { clickhouse: doorOf(ch, db) },
    export: { clickhouse: doorOf(ch, db), defaults: { windowDays: 90, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 }, rateLimit: { perMinute: 0, burst: 1 } },
    // Every route the document lists is served: PUT /v1/budgets, POST /v1/budget/check and POST /v1/quarantine/replay too.
    budgets,
    replay: {
      byIds: (ids) => quarantineByIds(doorOf(ch, db), db, ids, DEFAULT_QUERY_CONTEXT),
      list: (p) => quarantineList(doorOf(ch, db), db, p, DEFAULT_QUERY_CONTEXT),
      mode: 'direct',
      defaults: { windowDays: 90, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 },
    },
  });
  spec = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
  // Over a real socket: Node's request-line and header limit (431) is not applied by inject().
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(async () => app?.close());

const operations = () =>
  Object.entries(spec.paths as Record<string, Record<string, any>>).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));

/** Values inside (accepted) and outside (refused) of what a parameter's schema declares. */
function casesOf(schema: any): { inside: string[]; outside: string[] } {
  if (schema.type === 'integer' || schema.type === 'number') {
    const lo = schema.minimum as number;
    const hi = schema.maximum as number;
    expect(lo, 'a numeric parameter declares its minimum').toBeTypeOf('number');
    expect(hi, 'a numeric parameter declares its maximum').toBeTypeOf('number');
    // One past the maximum: for 2^53 − 1 the decimal string of 2^53, which a float cannot tell apart.
    const above = hi >= Number.MAX_SAFE_INTEGER ? (BigInt(hi) + 1n).toString() : String(hi + 1);
    return { inside: [String(lo), String(hi)], outside: [lo > 0 || schema.type === 'number' ? String(lo - 1) : '-1', above, 'abc'] };
  }
  expect(schema.type).toBe('string');
  if (Array.isArray(schema.enum)) return { inside: schema.enum as string[], outside: ['not-one-of-them'] };
  const pattern = schema.pattern ? new RegExp(schema.pattern) : undefined;
  if (pattern?.source.includes('19[7-9]')) {
    return {
      inside: ['1970-01-01', '2024-02-29T12:00', '2199-12-31T23:59:59.999999999+23:59', '2200-01-01T00:00:00.000Z', '2026-11-22T10:00:00Z'],
      outside: ['1969-12-31', '2200-01-02', '2025-02-29', '2026-04-31', '2026-11-22T24:00:00Z', '2026-11-22T10:00:00.1234567890Z', 'yesterday'],
    };
  }
  const max = schema.maxLength as number;
  expect(max, 'a string parameter declares its maxLength').toBeTypeOf('number');
  const longest = (pattern ? 'a' : 'é').repeat(max);
  const inside = [longest];
  const outside = [`${longest}a`];
  if (pattern) {
    expect(pattern.test(longest)).toBe(true);
    outside.push('a'.repeat(Math.min(max - 1, 10)) + '/');
  }
  return { inside, outside };
}

function urlOf(path: string, pathValues: Record<string, string>, query: Record<string, string>): string {
  const p = path.replace(/\{([a-z_]+)\}/g, (_, name: string) => encodeURIComponent(pathValues[name] ?? ''));
  const qs = new URLSearchParams(query).toString();
  return qs ? `${p}?${qs}` : p;
}

// Parameters whose valid values are opaque tokens of the server: a well-shaped one may still be refused (a forged cursor).
const OPAQUE = new Set(['cursor']);
// `to` needs a `from` before it (from defaults to now − 90 days).
/**
 * The other end of the range a from or to is sent with. An export covers at most 93 days, a rule
 * between the two: its other end is 1 ms away (a value that is no instant keeps the default one).
 */
const companion = (name: string, value: string, path: string): Record<string, string> => {
  const at = Date.parse(value);
  if (path === '/v1/export' && Number.isFinite(at)) {
    if (name === 'to') return { from: new Date(Math.max(0, at - 1)).toISOString() };
    if (name === 'from') return { to: new Date(at + 1).toISOString() };
  }
  return name === 'to' ? { from: '1970-01-01' } : {};
};

/** Served on purpose without an entry in the document, and why. */
const NOT_DOCUMENTED: Record<string, string> = {
  '/openapi.json': 'the document itself',
};

describe('OpenAPI conformance', () => {
  it('describes every route the server registers, with its methods (or names it as deliberately left out)', async () => {
    await app.ready();
    const served = servedRoutes(app);
    expect(served.size).toBeGreaterThan(30);
    const documented = new Map(Object.entries(spec.paths as Record<string, Record<string, unknown>>).map(([path, item]) => [path.replace(/\{([a-z_]+)\}/g, ':$1'), Object.keys(item).map((m) => m.toUpperCase())]));
    const missing: string[] = [];
    for (const [url, methods] of served) {
      if (NOT_DOCUMENTED[url]) continue;
      for (const m of methods.filter((x) => x !== 'HEAD')) if (!documented.get(url)?.includes(m)) missing.push(`${m} ${url}`);
    }
    expect(missing).toEqual([]);
    // And nothing documented that is not served.
    for (const [url, methods] of documented) expect(served.get(url), url).toEqual(expect.arrayContaining(methods));
    expect(documented.get('/v1/traces')).toEqual(['POST']);
  });

  it('declares bounds, patterns and lengths for every read parameter', () => {
    for (const { path, method, op } of operations()) {
      for (const p of op.parameters ?? []) {
        const s = p.schema;
        const bounded = s.type === 'integer' || s.type === 'number' ? s.minimum !== undefined && s.maximum !== undefined : s.maxLength !== undefined || s.pattern !== undefined || Array.isArray(s.enum);
        expect(bounded, `${method} ${path} ${p.name}: ${JSON.stringify(s)}`).toBe(true);
      }
    }
  });

  it('answers every declared bound as declared: inside accepted, one past it refused naming the parameter', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const { path, method, op } of operations()) {
      if (method !== 'get') continue;
      for (const p of op.parameters ?? []) {
        const cases = casesOf(p.schema);
        // from < to is a rule between two parameters: the first instant of the range is a `to`
        // only after a `from` before it, the last a `from` only before a `to` after it.
        const edge: Record<string, string> = p.name === 'to' ? { '1970-01-01': '1970-01-01T00:00:00.001Z' } : p.name === 'from' ? { '2200-01-01T00:00:00.000Z': '2199-12-31T23:59:59.999Z' } : {};
        const inside = cases.inside.map((v) => edge[v] ?? v);
        const { outside } = cases;
        const call = async (v: string) => {
          const url = p.in === 'path' ? urlOf(path, { ...PATH_VALUES, [p.name]: v }, {}) : urlOf(path, PATH_VALUES, { ...companion(p.name, v, path), [p.name]: v });
          checked++;
          return app.inject({ method: 'GET', url, headers: auth });
        };
        for (const v of inside) {
          const r = await call(v);
          // A valid path id may name nothing: the operation's declared 404, never a 400.
          const found = r.statusCode === 200 || (p.in === 'path' && r.statusCode === 404 && op.responses?.['404'] !== undefined);
          const ok = OPAQUE.has(p.name) ? found || (r.statusCode === 400 && !/must|expected|too/i.test(r.json().message)) : found;
          if (!ok) failures.push(`${path} ${p.name}=${v.slice(0, 40)} (declared valid) → ${r.statusCode} ${r.body.slice(0, 160)}`);
        }
        for (const v of outside) {
          const r = await call(v);
          if (r.statusCode !== 400 || !r.json().message.includes(p.name)) failures.push(`${path} ${p.name}=${v.slice(0, 40)} (declared invalid) → ${r.statusCode} ${r.body.slice(0, 160)}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(150);
  });

  it('fits the longest request the spec allows in the server limits (no 414, no 431)', async () => {
    for (const { path, method, op } of operations()) {
      if (method !== 'get' || !op.parameters?.length) continue;
      const pathValues: Record<string, string> = {};
      const query: Record<string, string> = {};
      for (const p of op.parameters) {
        // The costliest value on the wire: 3-byte UTF-8 characters where any are allowed (9 bytes percent-encoded each).
        const longest = p.schema.type === 'string' && !p.schema.pattern ? '\u0800'.repeat(p.schema.maxLength) : p.schema.pattern && OPAQUE.has(p.name) ? 'A'.repeat(p.schema.maxLength) : casesOf(p.schema).inside.at(-1) ?? '';
        if (p.in === 'path') pathValues[p.name] = longest;
        else query[p.name] = p.name === 'from' ? '1970-01-01T00:00:00.000000000+00:00' : longest;
      }
      const r = await fetch(`${base}${urlOf(path, pathValues, query)}`, { headers: auth });
      // A path id that names nothing is a 404 where the operation declares one.
      expect([200, 400, ...(op.responses?.['404'] ? [404] : [])], `${path}: ${r.status} ${(await r.text()).slice(0, 200)}`).toContain(r.status);
    }
    // The limit is real on this socket: a request line past 16 KiB is refused.
    expect((await fetch(`${base}/v1/tools?cursor=${'A'.repeat(17_000)}`, { headers: auth })).status).toBe(431);
  });

  it('answers 405 with Allow for every method a path does not list, QUERY and methods fastify does not route included', async () => {
    for (const [path, item] of Object.entries(spec.paths as Record<string, Record<string, unknown>>)) {
      const listed = Object.keys(item).map((m) => m.toUpperCase());
      const allowed = new Set(listed.includes('GET') ? [...listed, 'HEAD'] : listed);
      // QUERY is a body method (without a Content-Type fastify answered 400); PROPFIND is one it does not route (404).
      for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'QUERY', 'PROPFIND'].filter((x) => !allowed.has(x))) {
        const r = await app.inject({ method: m as 'GET', url: urlOf(path, PATH_VALUES, {}), headers: auth });
        expect(r.statusCode, `${m} ${path}`).toBe(405);
        expect(String(r.headers.allow).split(', ').sort(), `${m} ${path}`).toEqual([...allowed].sort());
      }
    }
  });

  it('describes POST /v1/packets as served: Packet items, the answer schema, no read-route codes', async () => {
    const post = spec.paths['/v1/packets'].post;
    expect(post.requestBody.content['application/json'].schema.items).toEqual({ $ref: '#/components/schemas/Packet' });
    expect(post.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PacketsAnswer' });
    expect(Object.keys(post.responses)).not.toContain('422');
    expect(Object.keys(post.responses)).not.toContain('429');
    expect(spec.components.schemas.ToolDependencyPacket.properties.dependency.properties.time_delta_ms.minimum).toBe(1);
    const a = toolCall({}, 'task-conf');
    const b = toolCall({ call_id: randomUUID(), created_at: '2026-11-22T10:00:02.000Z' }, 'task-conf');
    const body = [a, b, dependency({ task_id: 'task-conf', preceding_call_id: a.call_id, succeeding_call_id: b.call_id, time_delta_ms: 2000 }), a, { type: 'tool_call' }];
    const r = await app.inject({ method: 'POST', url: '/v1/packets', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    expect(r.statusCode).toBe(200);
    const answer = packetAnswerSchema.parse(r.json());
    expect(answer.results.map((x) => x.status)).toEqual(['accepted', 'accepted', 'accepted', 'duplicate', 'rejected']);
  });
});
