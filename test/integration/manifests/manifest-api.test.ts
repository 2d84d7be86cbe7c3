/**
 * PUT /v1/manifests (admin scope) and the read routes over manifests and the cache: YAML and
 * JSON bodies, a bad manifest refused whole (every error named, nothing stored), the trifecta
 * warning, versions and history, and who may do what (401/403; open on loopback without keys).
 */
import { describe, expect, it } from 'vitest';
import type { ApiKey } from '../../../platform/config.ts';
import { count, freshDatabase } from '../../helpers/clickhouse.ts';
import { insertCalls, rawCall } from '../../helpers/raw-calls.ts';
import { readApp } from '../../helpers/read-app.ts';

const ADMIN = 'admin-key-0123456789abcdef';
const READ = 'read-key-0123456789abcdef0';
const INGEST = 'ingest-key-0123456789abcde';
const KEYS: ApiKey[] = [
  { key: ADMIN, scopes: ['admin'] },
  { key: READ, scopes: ['read'] },
  { key: INGEST, scopes: ['ingest', 'read'] },
];

const YAML = `
search:
  tool_id: search
  idempotent: true
  cache_ttl_ms: 60000
  input_schema:
    type: object
    required: [q]
mail_send:
  tool_id: mail_send
  accesses_private_data: true
  receives_untrusted_input: true
  communicates_externally: true
`;

async function setup(keys: ApiKey[]) {
  const { ch, db, door } = await freshDatabase('ma');
  const app = readApp({ door, db, keys, manifests: { clockFromMs: Date.UTC(2026, 10, 1) } });
  const put = (body: string, type = 'application/yaml', key: string | null = ADMIN) =>
    app.inject({ method: 'PUT', url: '/v1/manifests', payload: body, headers: { 'content-type': type, ...(key ? { authorization: `Bearer ${key}` } : {}) } });
  const get = (url: string, key: string | null = READ) => app.inject({ method: 'GET', url, headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { ch, db, app, put, get };
}

describe('PUT /v1/manifests', () => {
  it('applies YAML and JSON as versions, warns about the trifecta, and serves current and history', async () => {
    const { put, get } = await setup(KEYS);
    const first = await put(YAML);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ version: 1, tools: 2 });
    expect(first.json().warnings).toHaveLength(1);
    expect(first.json().warnings[0]).toMatch(/^mail_send: .*requires_approval/);
    const second = await put(JSON.stringify({ search: { tool_id: 'search', idempotent: true, cache_ttl_ms: 300000 } }), 'application/json');
    expect(second.json()).toMatchObject({ version: 2, tools: 1, warnings: [] });

    const current = (await get('/v1/manifests')).json();
    expect(current).toMatchObject({ version: 2, warnings: [] });
    expect(Object.keys(current.tools)).toEqual(['search']);
    expect(current.tools.search).toMatchObject({ cache_ttl_ms: 300000, name: 'search', input_schema: null });
    const history = (await get('/v1/manifests/search/history')).json();
    expect(history.versions.map((v: { version: number; entry: { cache_ttl_ms: number } }) => [v.version, v.entry.cache_ttl_ms])).toEqual([
      [2, 300000],
      [1, 60000],
    ]);
    const mail = (await get('/v1/manifests/mail_send/history')).json();
    expect(mail.versions.map((v: { version: number; entry: unknown }) => [v.version, v.entry === null])).toEqual([
      [2, true],
      [1, false],
    ]);
    expect(Date.parse(history.versions[0].effective_at)).toBeGreaterThan(Date.parse(history.versions[1].effective_at));
  });

  it('refuses a bad manifest whole with every error named, storing nothing', async () => {
    const { put, get, ch, db } = await setup(KEYS);
    const r = await put('ok:\n  tool_id: ok\nbad:\n  tool_id: bad\n  timeout_ms: -1\n  colour: red\n');
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ error: 'invalid_manifest' });
    expect(r.json().errors).toEqual(expect.arrayContaining([expect.stringMatching(/^bad\.timeout_ms/), expect.stringMatching(/^bad: Unrecognized key: "colour"/)]));
    expect((await put('{not json', 'application/json')).statusCode).toBe(400);
    expect((await put('', 'application/json')).statusCode).toBe(400);
    expect(await count(ch, db, 'tool_manifests')).toBe(0);
    expect((await get('/v1/manifests')).json()).toEqual({ version: null, effective_at: null, tools: {}, warnings: [], applied_by: null });
  });

  it('needs the admin scope to apply; read to look', async () => {
    const { put, get } = await setup(KEYS);
    expect((await put(YAML, 'application/yaml', null)).statusCode).toBe(401);
    expect((await put(YAML, 'application/yaml', 'wrong-key-0123456789abcdef')).statusCode).toBe(401);
    expect((await put(YAML, 'application/yaml', READ)).statusCode).toBe(403);
    expect((await put(YAML, 'application/yaml', INGEST)).statusCode).toBe(403);
    expect((await get('/v1/manifests', ADMIN)).statusCode).toBe(403);
    expect((await get('/v1/manifests', null)).statusCode).toBe(401);
    expect((await put(YAML)).statusCode).toBe(200);
    expect((await get('/v1/manifests')).statusCode).toBe(200);
    expect((await get('/v1/cache/simulation')).statusCode).toBe(200);
  });

  it('is open on loopback without keys, and serves the cache routes', async () => {
    const { put, get, ch, db } = await setup([]);
    expect((await put(YAML, 'application/yaml', null)).statusCode).toBe(200);
    const t = Date.now() - 3600_000;
    await insertCalls(ch, db, [rawCall({ tool_id: 'search', t, args: { q: 'x' } }), rawCall({ tool_id: 'search', t: t + 1000, args: { q: 'x' }, duration_ms: 700 })], Date.now());
    const sim = (await get('/v1/cache/simulation?tool_id=search', null)).json();
    expect(sim.tools).toEqual([{ tool_id: 'search', ttl_ms: 60000, cacheable: true, calls: 2, hits: 1, hit_rate: 0.5, saved_ms: 700, saved_usd: 0 }]);
    const curve = (await get('/v1/cache/ttl-curve?tool_id=search', null)).json();
    expect(curve).toMatchObject({ tool_id: 'search', cacheable: true, calls: 2, suggested_ttl_ms: 60000 });
    expect((await get('/v1/cache/ttl-curve', null)).json()).toMatchObject({ tool_id: null, cacheable: true, calls: 2 });
    expect((await get('/v1/cache/ttl-curve?tool_id=', null)).statusCode).toBe(400);
    expect((await get('/v1/cache/simulation?ttl_ms=-5', null)).statusCode).toBe(400);
  });
});
