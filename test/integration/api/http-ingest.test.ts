import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { count, freshDatabase, rows, doorOf } from '../../helpers/clickhouse.ts';
import { dependency, outputArtifact, sha, toolCall } from '../../helpers/packets.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';

const INGEST_KEY = 'ingest-key-0123456789';
const READ_KEY = 'read-key-0123456789ab';

let ch: ClickHouseClient;
let db: string;
let app: FastifyInstance;

beforeAll(async () => {
  ({ ch, db } = await freshDatabase('http'));
  const metrics = new MetricsRegistry();
  const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 64 * 1024, dedupCacheEntries: 100, metrics, logger: silentLogger() });
  app = buildApp({
    ingest: { submit: (p) => writer.write(p) },
    readiness: async () => ({ ready: true, checks: {} }),
    metrics,
    apiKeys: [
      { key: INGEST_KEY, scopes: ['ingest'] },
      { key: READ_KEY, scopes: ['read'] },
    ],
    maxBodyBytes: 4 * 1024 * 1024,
    logger: silentLogger(),
  });
});
afterAll(async () => app.close());

const post = (payload: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/v1/packets', payload, headers: { 'content-type': 'application/json', authorization: `Bearer ${INGEST_KEY}`, ...headers } });

describe('POST /v1/packets on embedded ClickHouse', () => {
  it('writes 1,000 valid tool_calls exactly once when the same body is POSTed twice', async () => {
    const task = `task-${randomUUID()}`;
    const packets = Array.from({ length: 1000 }, (_, i) =>
      toolCall({ args: { q: `Zürich ' OR 1=1 -- ${i}`, code: 'SELECT * FROM t;\nprint("x")', n: { i, deep: [i, { x: null }] } }, created_at: new Date(Date.UTC(2026, 10, 22, 10, 0, 0, i)).toISOString() }, task),
    );
    const body = JSON.stringify(packets);
    const first = await post(body);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ accepted: 1000, rejected: 0, duplicates: 0 });
    const second = await post(body);
    // Counted apart, as results[] says: nothing new was written the second time.
    expect(second.json()).toMatchObject({ accepted: 0, rejected: 0, duplicates: 1000 });
    expect((second.json() as { results: Array<{ status: string }> }).results.every((r) => r.status === 'duplicate')).toBe(true);
    expect(await count(ch, db, 'tool_invocations', `task_id = '${task}'`)).toBe(1000);
    // A restarted process has an empty cache: ClickHouse itself must tell the redelivery apart.
    const restarted = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 64 * 1024, dedupCacheEntries: 0, metrics: new MetricsRegistry(), logger: silentLogger() });
    const again = await restarted.write(packets.map((p, index) => ({ raw: JSON.stringify(p), source: { kind: 'http', requestId: 'replay', index } })));
    expect(again.every((o) => o.status === 'duplicate')).toBe(true);
    expect(await count(ch, db, 'tool_invocations', `task_id = '${task}'`)).toBe(1000);
    const [u] = await rows<{ u: string; c: string }>(ch, 'SELECT uniqExact(call_id) AS u, count() AS c FROM {db:Identifier}.tool_invocations', { db });
    expect(u?.u).toBe(u?.c);
    // Stored args are the canonical text whose SHA-256 is args_hash (verifiable by anyone).
    const stored = await rows<{ args: string; args_hash: string }>(ch, 'SELECT args, args_hash FROM {db:Identifier}.tool_invocations LIMIT 5', { db });
    for (const r of stored) expect(sha(r.args)).toBe(r.args_hash);
  });

  it('accepts NDJSON, outputs and dependencies, storing content once per hash', async () => {
    const call = toolCall();
    const o1 = outputArtifact(call.call_id, 'a,b\n1,2\n', 'csv');
    const other = toolCall();
    const o2 = outputArtifact(other.call_id, 'a,b\n1,2\n', 'csv');
    const dep = dependency({ preceding_call_id: call.call_id, succeeding_call_id: other.call_id });
    const body = [call, other, o1, o2, dep].map((p) => JSON.stringify(p)).join('\n');
    const r = await post(body, { 'content-type': 'application/x-ndjson' });
    expect(r.json()).toMatchObject({ accepted: 5, rejected: 0 });
    expect(await count(ch, db, 'tool_outputs', `content_hash = '${o1.output.content_hash}'`)).toBe(2);
    expect(await count(ch, db, 'output_contents', `content_hash = '${o1.output.content_hash}'`)).toBe(1);
    expect(await count(ch, db, 'tool_workflows', `preceding_call_id = '${call.call_id}'`)).toBe(1);
  });

  it('answers each invalid packet as rejected with its reason and quarantines it with its raw bytes', async () => {
    const reused = toolCall();
    await post(JSON.stringify([reused]));
    const bad = [
      toolCall({ args_hash: sha('wrong') }),
      toolCall({ error: 'x' }),
      toolCall({ duration_ms: -3 }),
      toolCall({ surprise: 1 }),
      dependency({ time_delta_ms: 0 }),
      outputArtifact(randomUUID(), 'abc', 'text', { size_bytes: 99 }),
      { ...reused, invocation: { ...reused.invocation, duration_ms: 999 } },
    ];
    const r = await post(JSON.stringify(bad));
    const body = r.json() as { request_id: string; rejected: number; results: Array<{ status: string; reason: { code: string } }> };
    expect(body.rejected).toBe(7);
    expect(body.results.map((x) => x.reason.code)).toEqual([
      'I5_args_hash', 'I3_error_on_success', 'schema', 'schema', 'I6_dependency', 'I7_output_content', 'I1_call_id_reused',
    ]);
    const q = await rows<{ reason_code: string; raw: string; source_key: string }>(
      ch,
      'SELECT reason_code, raw, source_key FROM {db:Identifier}.quarantine WHERE request_id = {rid:String} ORDER BY source_key',
      { db, rid: body.request_id },
    );
    expect(q).toHaveLength(7);
    expect(new Set(q.map((x) => x.raw))).toEqual(new Set(bad.map((b) => JSON.stringify(b))));
    // The reused call_id kept its first row.
    expect(await count(ch, db, 'tool_invocations', `call_id = '${reused.call_id}'`)).toBe(1);
  });

  it('answers 400 for a malformed body, 413 for an oversized one, 415 for other media', async () => {
    expect((await post('[{"type": "tool_call"')).statusCode).toBe(400);
    expect((await post(JSON.stringify([toolCall({ args: { blob: 'x'.repeat(5 * 1024 * 1024) } })]))).statusCode).toBe(413);
    expect((await post('x', { 'content-type': 'application/xml' })).statusCode).toBe(415);
  });

  it('answers every error in one shape with its request id: other media, no content type, text/plain, unknown routes', async () => {
    const shape = { error: expect.any(String), message: expect.any(String), request_id: expect.any(String) };
    const body = JSON.stringify([toolCall()]);
    for (const headers of [{ 'content-type': 'application/xml' }, { 'content-type': 'text/plain' }, {}]) {
      const r = await app.inject({ method: 'POST', url: '/v1/packets', payload: body, headers: { authorization: `Bearer ${INGEST_KEY}`, ...headers } });
      expect(r.statusCode, JSON.stringify(headers)).toBe(415);
      expect(r.json()).toEqual({ ...shape, error: 'unsupported_media_type', message: expect.stringContaining('application/x-ndjson') });
    }
    const missing = await app.inject('/v1/nope');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ ...shape, error: 'not_found' });
  });

  it('judges a pretty-printed single packet as one packet: no line-by-line quarantine', async () => {
    const before = await count(ch, db, 'quarantine');
    const r = await post(JSON.stringify(toolCall(), null, 2));
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ accepted: 1, rejected: 0, duplicates: 0, results: [{ index: 0, status: 'accepted' }] });
    const broken = await post(JSON.stringify(toolCall(), null, 2).slice(0, -2));
    expect(broken.statusCode).toBe(400);
    expect(await count(ch, db, 'quarantine')).toBe(before);
  });

  it('rejects a packet over the packet size limit and quarantines it', async () => {
    const r = await post(JSON.stringify([toolCall({ args: { blob: 'y'.repeat(100 * 1024) } })]));
    expect((r.json() as { results: Array<{ reason: { code: string } }> }).results[0]?.reason.code).toBe('oversized');
  });

  it('needs an ingest key: none → 401, unknown → 401, read-only → 403', async () => {
    const body = JSON.stringify([toolCall()]);
    const none = await app.inject({ method: 'POST', url: '/v1/packets', payload: body, headers: { 'content-type': 'application/json' } });
    expect(none.statusCode).toBe(401);
    expect((await post(body, { authorization: 'Bearer nope-nope-nope-nope' })).statusCode).toBe(401);
    expect((await post(body, { authorization: `Bearer ${READ_KEY}` })).statusCode).toBe(403);
    expect((await post(body, { authorization: '', 'x-api-key': INGEST_KEY })).statusCode).toBe(200);
  });

  it('serves healthz, readyz and metrics', async () => {
    expect((await app.inject('/healthz')).json()).toEqual({ status: 'ok' });
    expect((await app.inject('/readyz')).statusCode).toBe(200);
    const m = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${READ_KEY}` } });
    expect(m.body).toMatch(/tool_audit_ingest_rows_total\{segment="tool_call"\} \d+/);
    expect(m.body).toMatch(/tool_audit_quarantined_total\{reason="I5_args_hash"\} 1/);
  });

  it('takes examples/packets.json as the README says: the packets Python finds hashed right are accepted, the rest refused', async () => {
    const file = new URL('../../../examples/packets.json', import.meta.url);
    // The oracle: CPython's json module hashes each call's args.
    const py = execFileSync('python3', ['-c', 'import json,hashlib,sys\nfor p in json.load(open(sys.argv[1])):\n  i=p.get("invocation")\n  print(int(i is not None and hashlib.sha256(json.dumps(i["args"],sort_keys=True).encode()).hexdigest()==i["args_hash"]) if i else 1)', fileURLToPath(file)], { encoding: 'utf8' });
    const hashOk = py.trim().split('\n').map((l) => l === '1');
    const r = await post(readFileSync(file, 'utf8'));
    const body = r.json() as { accepted: number; rejected: number; duplicates: number; results: Array<{ status: string; reason?: { code: string } }> };
    expect(body.results.map((x) => x.reason?.code ?? x.status)).toEqual(hashOk.map((ok, i) => (!ok ? 'I5_args_hash' : i === 5 ? 'schema' : 'accepted')));
    expect({ accepted: body.accepted, rejected: body.rejected, duplicates: body.duplicates }).toEqual({ accepted: 4, rejected: 2, duplicates: 0 });
  });
});
