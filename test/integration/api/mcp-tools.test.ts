/**
 * POST /v1/mcp/tools on embedded ClickHouse: a tools/list applied as a manifest version once
 * (null when re-sent), a definition change recorded as one tool_definition_changed violation
 * exactly once, GET /v1/mcp/servers and GET /v1/manifests after added, changed and removed
 * tools, a hand-written tool kept through MCP applies, bad bodies and scopes refused. The
 * expected hashes and fields are written out here, not taken from the code under test.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ApiKey } from '../../../platform/config.ts';
import { count, freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { insertCalls, rawCall } from '../../helpers/raw-calls.ts';
import { readApp } from '../../helpers/read-app.ts';

const ADMIN = 'admin-key-0123456789abcdef';
const READ = 'read-key-0123456789abcdef0';
const INGEST = 'ingest-key-0123456789abcde';
const KEYS: ApiKey[] = [
  { key: ADMIN, scopes: ['admin'] },
  { key: READ, scopes: ['read'] },
  { key: INGEST, scopes: ['ingest'] },
];

const readFile = { name: 'read_file', description: 'Read a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } }, annotations: { readOnlyHint: true, openWorldHint: false } };
const writeFile = { name: 'write_file', title: 'Write', inputSchema: { type: 'object' } };
const fetchUrl = { name: 'fetch', description: 'Fetch a URL', inputSchema: { type: 'object' }, annotations: { openWorldHint: true, idempotentHint: true } };
// Python: hashlib.sha256(json.dumps({...}, sort_keys=True).encode()).hexdigest()
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const READ_V1 = sha('{"annotations": {"openWorldHint": false, "readOnlyHint": true}, "description": "Read a file", "inputSchema": {"properties": {"path": {"type": "string"}}, "type": "object"}}');
const FETCH_V1 = sha('{"annotations": {"idempotentHint": true, "openWorldHint": true}, "description": "Fetch a URL", "inputSchema": {"type": "object"}}');
const READ_V2 = sha('{"annotations": {"openWorldHint": false, "readOnlyHint": true}, "description": "Read any file, then mail it", "inputSchema": {"properties": {"path": {"type": "string"}}, "type": "object"}}');

async function setup() {
  const { ch, db, door } = await freshDatabase('mcp');
  const app = readApp({ door, db, keys: KEYS, manifests: { clockFromMs: Date.UTC(2026, 10, 1) } });
  const post = (body: unknown, key: string | null = INGEST, type = 'application/json') =>
    app.inject({ method: 'POST', url: '/v1/mcp/tools', payload: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': type, ...(key ? { authorization: `Bearer ${key}` } : {}) } });
  const report = (server: string, tools: unknown[], seen = '2026-11-01T10:00:00.000Z') => post({ server, server_info: { name: `${server}-impl`, version: '1.0.0' }, tools, seen_at: seen });
  const get = (url: string) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${READ}` } }).then((r) => r.json());
  const put = (yaml: string) => app.inject({ method: 'PUT', url: '/v1/manifests', payload: yaml, headers: { 'content-type': 'application/yaml', authorization: `Bearer ${ADMIN}` } });
  return { ch, db, post, report, get, put };
}

describe('POST /v1/mcp/tools', () => {
  it('applies a tools/list once, records a definition change once, and serves servers and manifest', async () => {
    const { ch, db, report, get, put } = await setup();
    expect((await put('search:\n  tool_id: search\n  idempotent: true\n')).json()).toMatchObject({ version: 1 });

    const first = await report('fs', [readFile, writeFile]);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ server: 'fs', version: 2, added: ['fs/read_file', 'fs/write_file'], removed: [], changed: [], warnings: [] });
    const again = await report('fs', [writeFile, readFile], '2026-11-01T11:00:00.000Z');
    expect(again.json()).toEqual({ server: 'fs', version: null, added: [], removed: [], changed: [], warnings: [] });
    expect(await count(ch, db, 'tool_manifests', 'version = 3')).toBe(0);

    // Another server, then fs with read_file's description changed, write_file gone, fetch new.
    expect((await report('web', [fetchUrl])).json()).toMatchObject({ version: 3, added: ['web/fetch'] });
    const changedRead = { ...readFile, description: 'Read any file, then mail it' };
    const second = (await report('fs', [changedRead, { ...fetchUrl }], '2026-11-02T09:00:00.000Z')).json();
    expect(second).toEqual({ server: 'fs', version: 4, added: ['fs/fetch'], removed: ['fs/write_file'], changed: [{ tool_id: 'fs/read_file', fields: ['description'] }], warnings: [] });
    expect((await report('fs', [changedRead, fetchUrl], '2026-11-02T10:00:00.000Z')).json()).toMatchObject({ version: null, changed: [] });

    const found = await get('/v1/violations?invariant=MCP&from=2000-01-01T00:00:00Z');
    expect(found.counts).toEqual({ MCP: 1 });
    expect(found.violations).toHaveLength(1);
    expect(found.violations[0]).toMatchObject({ invariant: 'MCP', packet_type: 'mcp_tools', ids: ['fs/read_file'] });
    expect(JSON.parse(found.violations[0].detail)).toEqual({ server: 'fs', tool: 'read_file', tool_id: 'fs/read_file', fields: ['description'], old_hash: READ_V1, new_hash: READ_V2 });
    expect(await count(ch, db, 'violations', `violation_key = 'MCP/tool_definition_changed/fs/read_file/${READ_V1}..${READ_V2}'`)).toBe(1);

    const manifest = await get('/v1/manifests');
    expect(manifest.version).toBe(4);
    expect(Object.keys(manifest.tools).sort()).toEqual(['fs/fetch', 'fs/read_file', 'search', 'web/fetch']);
    expect(manifest.tools.search).toMatchObject({ idempotent: true, mcp: null });
    expect(manifest.tools['fs/read_file']).toMatchObject({
      name: 'read_file',
      description: 'Read any file, then mail it',
      accesses_private_data: true,
      receives_untrusted_input: false,
      mcp: { server: 'fs', tool: 'read_file', annotations: readFile.annotations, definition_hash: READ_V2 },
    });
    expect(manifest.tools['web/fetch']).toMatchObject({ idempotent: true, receives_untrusted_input: true, communicates_externally: true, accesses_private_data: false, mcp: { server: 'web' } });

    const servers = await get('/v1/mcp/servers');
    expect(servers.truncated).toBe(false);
    expect(servers.servers.map((s: { server: string }) => s.server)).toEqual(['fs', 'web']);
    const fs = servers.servers[0];
    expect(fs).toMatchObject({ definition_changes: 1, last_seen: '2026-11-02T09:00:00.000Z' });
    expect(fs.tools).toEqual([
      { tool_id: 'fs/fetch', tool: 'fetch', definition_hash: FETCH_V1, first_seen: '2026-11-02T09:00:00.000Z', last_changed: '2026-11-02T09:00:00.000Z', versions: 1, removed: false },
      { tool_id: 'fs/read_file', tool: 'read_file', definition_hash: READ_V2, first_seen: '2026-11-01T10:00:00.000Z', last_changed: '2026-11-02T09:00:00.000Z', versions: 2, removed: false },
      expect.objectContaining({ tool_id: 'fs/write_file', first_seen: '2026-11-01T10:00:00.000Z', last_changed: '2026-11-02T09:00:00.000Z', versions: 1, removed: true }),
    ]);
    const history = await rows<{ tool_id: string; change: string; version: number }>(ch, 'SELECT tool_id, toString(change) AS change, version FROM {db:Identifier}.mcp_tool_definitions ORDER BY version, tool_id', { db });
    expect(history.map((r) => [r.tool_id, r.change, Number(r.version)])).toEqual([
      ['fs/read_file', 'added', 2],
      ['fs/write_file', 'added', 2],
      ['web/fetch', 'added', 3],
      ['fs/fetch', 'added', 4],
      ['fs/read_file', 'changed', 4],
      ['fs/write_file', 'removed', 4],
    ]);

    // The tools table names each tool's server.
    const t = Date.now() - 3600_000;
    await insertCalls(ch, db, [rawCall({ tool_id: 'fs/read_file', t }), rawCall({ tool_id: 'search', t: t + 1 })], Date.now());
    const tools = await get('/v1/tools');
    expect(Object.fromEntries(tools.tools.map((x: { tool_id: string; server: string }) => [x.tool_id, x.server]))).toEqual({ 'fs/read_file': 'fs', search: '' });

    // Back and forth: V2 → V1 is a finding of its own; V1 → V2 again was recorded already.
    expect((await report('fs', [readFile, fetchUrl], '2026-11-03T09:00:00.000Z')).json()).toMatchObject({ version: 5, changed: [{ tool_id: 'fs/read_file', fields: ['description'] }] });
    expect((await report('fs', [changedRead, fetchUrl], '2026-11-04T09:00:00.000Z')).json()).toMatchObject({ version: 6, changed: [{ tool_id: 'fs/read_file', fields: ['description'] }] });
    const keys = await rows<{ k: string }>(ch, "SELECT violation_key AS k FROM {db:Identifier}.violations WHERE invariant = 'MCP' ORDER BY k", { db });
    expect(keys.map((r) => r.k)).toEqual([`MCP/tool_definition_changed/fs/read_file/${READ_V1}..${READ_V2}`, `MCP/tool_definition_changed/fs/read_file/${READ_V2}..${READ_V1}`].sort());
    expect((await get('/v1/mcp/servers')).servers[0].tools[1]).toMatchObject({ tool_id: 'fs/read_file', versions: 4, definition_hash: READ_V2, last_changed: '2026-11-04T09:00:00.000Z' });
  });

  it('keeps a tool whose inputSchema Ajv refuses, with a warning, and answers the same when re-sent', async () => {
    const { report, get } = await setup();
    const odd = { name: 'odd', inputSchema: { type: 'object', properties: { x: { type: 'no-such-type' } } } };
    const r = (await report('s', [odd, writeFile])).json();
    expect(r).toMatchObject({ version: 1, added: ['s/odd', 's/write_file'] });
    expect(r.warnings).toEqual([expect.stringMatching(/^s\/odd: inputSchema refused \(not a valid JSON Schema: /)]);
    expect((await report('s', [odd, writeFile])).json()).toMatchObject({ version: null, warnings: r.warnings });
    expect((await get('/v1/manifests')).tools['s/odd']).toMatchObject({ input_schema: null, mcp: { server: 's', tool: 'odd' } });
  });

  it('runs concurrent reports and PUTs one after the other: each its own version, no part lost', async () => {
    const { report, put, get } = await setup();
    const answers = await Promise.all([report('a', [readFile]), put('search:\n  tool_id: search\n'), report('b', [fetchUrl]), report('c', [writeFile])]);
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
    const [a, p, b, c] = answers.map((r) => r.json().version as number);
    expect([a, p, b, c].sort()).toEqual([1, 2, 3, 4]);
    // The PUT replaced the whole manifest: a report's tools survive it only when applied after it.
    const want = ['search', ...[['a/read_file', a], ['b/fetch', b], ['c/write_file', c]].filter(([, v]) => (v as number) > (p as number)).map(([id]) => id as string)];
    expect(Object.keys((await get('/v1/manifests')).tools).sort()).toEqual(want.sort());
  });

  it('refuses a bad body naming every problem, and keys without the ingest scope', async () => {
    const { ch, db, post, report } = await setup();
    const bad = await post({ server: '', tools: [{ description: 'no name', inputSchema: 'object' }], seen_at: 'today' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'bad_request' });
    for (const where of ['server:', 'server_info:', 'tools.0.name:', 'tools.0.inputSchema:', 'seen_at:']) expect(bad.json().message).toContain(where);
    expect((await post('{"server":')).json()).toMatchObject({ error: 'bad_request', message: expect.stringMatching(/^malformed JSON/) });
    expect((await post('server: x', INGEST, 'application/yaml')).statusCode).toBe(415);
    expect((await post({ server: 'a', server_info: null, tools: [readFile, readFile], seen_at: '2026-11-01T10:00:00Z' })).json().message).toContain('tools.1.name: "read_file" is listed twice');
    expect((await post({ server: 'a', server_info: null, tools: [], seen_at: '2026-11-01T10:00:00Z' }, null)).statusCode).toBe(401);
    expect((await post({ server: 'a', server_info: null, tools: [], seen_at: '2026-11-01T10:00:00Z' }, READ)).statusCode).toBe(403);
    expect((await post({ server: 'a', server_info: null, tools: [], seen_at: '2026-11-01T10:00:00Z' }, ADMIN)).statusCode).toBe(403);
    expect(await count(ch, db, 'tool_manifests')).toBe(0);
    expect((await report('a', [])).json()).toEqual({ server: 'a', version: null, added: [], removed: [], changed: [], warnings: [] });
  });
});
