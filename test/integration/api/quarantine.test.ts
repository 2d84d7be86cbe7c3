/**
 * The quarantine as a promise: list and show what was quarantined, with its exact
 * bytes; replay it — stored bytes that pass now, the producer's corrected packet, a packet that
 * still fails, the same replay twice — through the real segment writer on embedded ClickHouse.
 * Oracles: the packet texts this test built, and rows counted straight in ClickHouse.
 */
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import type { ClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import type { QuarantineList, QuarantineRecord, ReplayAnswer } from '../../../queries/quarantine-schemas.ts';
import { count, freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { outputArtifact, toolCall } from '../../helpers/packets.ts';
import { BOTH_KEY, client, INGEST_KEY, quarantineApp, READ_KEY } from '../../helpers/quarantine-app.ts';

let ch: ClickHouseClient;
let db: string;
let door: ClickHouseDoor;
let app: FastifyInstance;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  ({ ch, db, door } = await freshDatabase('quarantine'));
  const writer = createSegmentWriter({ clickhouse: door, maxPacketBytes: 64 * 1024, dedupCacheEntries: 100, metrics: new MetricsRegistry(), logger: silentLogger() });
  app = quarantineApp(door, { submit: (p) => writer.write(p) });
  api = client(app);
});
afterAll(async () => app.close());

const keyId = (key: string) => `key:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
const quarantineRows = () => rows(ch, 'SELECT * EXCEPT received_at, toString(received_at) AS at FROM {db:Identifier}.quarantine ORDER BY source_key', { db });
const list = async (qs: string) => {
  const r = await api.get(`/v1/quarantine${qs}`);
  expect(r.statusCode, r.body).toBe(200);
  return r.json<QuarantineList>();
};
const show = async (id: string) => (await api.get(`/v1/quarantine/${encodeURIComponent(id)}`)).json<{ record: QuarantineRecord }>().record;
const badHash = (over: Record<string, unknown> = {}) => {
  const p = toolCall(over);
  return { ...p, invocation: { ...p.invocation, args_hash: '0'.repeat(64) } };
};

/** POSTs packets (as these exact texts, NDJSON) and returns their quarantine ids by index. */
async function quarantine(texts: string[]): Promise<string[]> {
  const r = await api.postPackets(texts.join('\n'), 'application/x-ndjson');
  expect(r.statusCode).toBe(200);
  const body = r.json<{ request_id: string; results: Array<{ status: string }> }>();
  return body.results.map((x, i) => (x.status === 'rejected' ? `http:${body.request_id}#${i}` : ''));
}

describe('GET /v1/quarantine and /v1/quarantine/{id}', () => {
  it('lists quarantined packets newest first with their exact bytes, reason, origin and counts; filters and pages', async () => {
    const call = toolCall({}, `task-${randomUUID()}`);
    const texts = [
      JSON.stringify(badHash()), // I5
      '{"type": "tool_call", "call_id": ', // malformed
      JSON.stringify(outputArtifact(call.call_id, 'hello', 'text', { content_hash: '1'.repeat(64) })), // I7
      JSON.stringify(call), // accepted
      ' {"type":"tool_call","weird":  1.0e+3 } ', // schema, odd spacing kept
    ];
    const ids = await quarantine(texts);
    const requestId = ids[0]?.split('#')[0]?.slice('http:'.length) ?? '';
    const all = await list(`?source=${encodeURIComponent(`http:${requestId}`)}`);
    expect(all.records.map((r) => r.quarantine_id).sort()).toEqual([ids[0], ids[1], ids[2], ids[4]].sort());
    for (const r of all.records) {
      const i = Number(r.quarantine_id.split('#')[1]);
      expect(r.raw).toBe((texts[i] as string).trim());
      expect(r.raw_encoding).toBe('utf8');
      expect(r.source).toEqual({ kind: 'http', topic: null, partition: null, offset: null, request_id: requestId });
      expect(r.replays).toEqual([]);
    }
    expect(all.counts).toEqual({ I5_args_hash: 1, I7_output_content: 1, malformed_json: 1, schema: 1 });
    const times = all.records.map((r) => r.received_at);
    expect([...times].sort().reverse()).toEqual(times);
    // The request id also finds them (HTTP packets that went through Kafka keep it as request_id).
    expect((await list(`?source=${requestId}`)).records).toHaveLength(4);
    const i5 = await list(`?reason=I5_args_hash&source=http:${requestId}`);
    expect(i5.records.map((r) => [r.quarantine_id, r.reason.code, r.packet_type, r.ids])).toEqual([[ids[0], 'I5_args_hash', 'tool_call', [JSON.parse(texts[0] as string).call_id]]]);
    expect((await list(`?packet_type=output_artifact&source=http:${requestId}`)).records.map((r) => r.quarantine_id)).toEqual([ids[2]]);
    expect((await list(`?source=http:${requestId}&from=2000-01-01&to=2000-01-02`)).records).toEqual([]);
    // Pages of one: every record once, in the same order.
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const p: QuarantineList = await list(`?source=http:${requestId}&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...p.records.map((r) => r.quarantine_id));
      cursor = p.next_cursor;
    }
    expect(seen).toEqual(all.records.map((r) => r.quarantine_id));
    // One record by id; unknown ids 404; the read scope is required.
    expect(await show(ids[2] as string)).toEqual(all.records.find((r) => r.quarantine_id === ids[2]));
    expect((await api.get('/v1/quarantine/http%3Anope%230')).statusCode).toBe(404);
    expect((await api.get('/v1/quarantine', INGEST_KEY)).statusCode).toBe(403);
    expect((await api.get('/v1/quarantine?reason=')).statusCode).toBe(400);
  });
});

describe('POST /v1/quarantine/replay', () => {
  it('lands the producer’s corrected packet exactly once, twice replayed, and records both replays; the quarantine row stays as it was', async () => {
    const broken = badHash();
    const [id] = await quarantine([JSON.stringify(broken)]);
    const callId = broken.call_id;
    const before = await quarantineRows();
    const fixed = toolCall({ call_id: callId, created_at: broken.invocation.created_at });
    // The corrected packet as its exact text: Python-style spacing and a float literal.
    const fixedText = JSON.stringify(fixed, null, 1);
    const first = await api.replay({ ids: [id], packets: [fixedText] });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json<ReplayAnswer>()).toMatchObject({ mode: 'direct', accepted: 1, duplicates: 0, rejected: 0, results: [{ quarantine_id: id, corrected: true, status: 'accepted', packet_type: 'tool_call', ids: [callId] }] });
    expect(await count(ch, db, 'tool_invocations', `call_id = '${callId}'`)).toBe(1);
    // Again: nothing added, the answer says duplicate; as an object instead of text, same packet.
    const second = await api.replay({ ids: [id], packets: [fixed] });
    expect(second.json<ReplayAnswer>()).toMatchObject({ accepted: 0, duplicates: 1, results: [{ status: 'duplicate' }] });
    expect(await count(ch, db, 'tool_invocations', `call_id = '${callId}'`)).toBe(1);
    expect(await quarantineRows()).toEqual(before);
    const record = await show(id as string);
    expect(record.raw).toBe(JSON.stringify(broken));
    expect(record.replays.map((r) => [r.replay_id, r.outcome, r.corrected, r.key_id, r.ids, r.reason])).toEqual([
      [first.json<ReplayAnswer>().replay_id, 'accepted', true, keyId(INGEST_KEY), [callId], null],
      [second.json<ReplayAnswer>().replay_id, 'duplicate', true, keyId(INGEST_KEY), [callId], null],
    ]);
    expect(JSON.stringify(record.replays)).not.toContain(INGEST_KEY);
  });

  it('answers a packet that still fails with its reason, records it, and does not quarantine it again', async () => {
    const original = toolCall({}, `task-${randomUUID()}`);
    const reuse = toolCall({ call_id: original.call_id, duration_ms: 999 }, original.invocation.task_id);
    const [, reusedId] = await quarantine([JSON.stringify(original), JSON.stringify(reuse)]);
    const [brokenId] = await quarantine([JSON.stringify(badHash())]);
    const before = await quarantineRows();
    const r = await api.replay({ ids: [reusedId, brokenId] });
    expect(r.json<ReplayAnswer>()).toMatchObject({
      accepted: 0,
      rejected: 2,
      results: [
        { quarantine_id: reusedId, corrected: false, status: 'rejected', reason: { code: 'I1_call_id_reused' } },
        { quarantine_id: brokenId, corrected: false, status: 'rejected', reason: { code: 'I5_args_hash' } },
      ],
    });
    expect(await quarantineRows()).toEqual(before);
    expect(await count(ch, db, 'tool_invocations', `call_id = '${original.call_id}' AND duration_ms = 999`)).toBe(0);
    const [replay] = (await show(brokenId as string)).replays;
    expect(replay).toMatchObject({ outcome: 'rejected', corrected: false, reason: { code: 'I5_args_hash' }, packet_type: 'tool_call' });
  });

  it('replays stored bytes that pass now (quarantined under a stricter limit), by id and by filter', async () => {
    // Quarantined by a pipeline whose packet limit was too small; the operator raised it since.
    const strict = createSegmentWriter({ clickhouse: door, maxPacketBytes: 200, dedupCacheEntries: 0, metrics: new MetricsRegistry(), logger: silentLogger() });
    const packets = [toolCall({}, `task-${randomUUID()}`), toolCall({}, `task-${randomUUID()}`)];
    const req = `strict-${randomUUID()}`;
    const outcomes = await strict.write(packets.map((p, index) => ({ raw: JSON.stringify(p), source: { kind: 'http', requestId: req, index } })));
    expect(outcomes.map((o) => o.reason?.code)).toEqual(['oversized', 'oversized']);
    const byId = await api.replay({ ids: [`http:${req}#0`] });
    expect(byId.json<ReplayAnswer>()).toMatchObject({ accepted: 1, results: [{ status: 'accepted', corrected: false, ids: [packets[0]?.call_id] }] });
    const byFilter = await api.replay({ filter: { source: `http:${req}`, reason: 'oversized', limit: 10 } });
    expect(byFilter.statusCode, byFilter.body).toBe(200);
    const answer = byFilter.json<ReplayAnswer>();
    expect(answer.results.map((x) => [x.quarantine_id, x.status])).toEqual([
      [`http:${req}#0`, 'duplicate'],
      [`http:${req}#1`, 'accepted'],
    ]);
    expect(answer.next_cursor).toBeNull();
    for (const p of packets) expect(await count(ch, db, 'tool_invocations', `call_id = '${p.call_id}'`)).toBe(1);
    // The stored row holds the exact bytes the pipeline was given.
    const [row] = await rows<{ raw: string }>(ch, 'SELECT raw FROM {db:Identifier}.quarantine WHERE source_key = {k:String}', { db, k: `http:${req}#1` });
    expect(row?.raw).toBe(JSON.stringify(packets[1]));
  });

  it('refuses what it cannot do: unknown ids (404, nothing replayed), malformed requests (400), the read scope (403)', async () => {
    const [id] = await quarantine([JSON.stringify(badHash())]);
    const unknown = await api.replay({ ids: [id, 'http:nope#1'] });
    expect(unknown.statusCode).toBe(404);
    expect((await show(id as string)).replays).toEqual([]);
    expect((await api.replay({ ids: [] })).statusCode).toBe(400);
    expect((await api.replay({ ids: [id, id] })).statusCode).toBe(400);
    expect((await api.replay({ ids: [id], extra: 1 })).statusCode).toBe(400);
    expect((await api.replay('{"ids": [')).statusCode).toBe(400);
    expect((await api.replay({ ids: [id] }, READ_KEY)).statusCode).toBe(403);
  });
});

describe('POST /v1/packets with invalid UTF-8', () => {
  it('refuses the body (400) and stores nothing of it, altered or not', async () => {
    const call = toolCall({ result_summary: { text: 'cafe' } }, `task-${randomUUID()}`);
    const text = JSON.stringify([call]);
    const at = text.indexOf('cafe') + 3;
    const bytes = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xe9]), Buffer.from(text.slice(at + 1))]);
    const before = await count(ch, db, 'quarantine');
    const r = await api.postPackets(bytes);
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ error: 'bad_request', message: expect.stringContaining(`offset ${at}`) });
    expect(await count(ch, db, 'tool_invocations', `call_id = '${call.call_id}'`)).toBe(0);
    expect(await count(ch, db, 'quarantine')).toBe(before);
    // The same body with é as UTF-8 is stored as sent.
    const ok = await api.postPackets(Buffer.from(text.replace('cafe', 'café')));
    expect(ok.statusCode).toBe(200);
  });
});

describe('tool-audit quarantine (CLI against a running server)', () => {
  it('lists, shows the exact bytes and replays a corrected packet', async () => {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const dir = mkdtempSync(join(tmpdir(), 'ta-quarantine-cli-'));
    try {
      const broken = badHash();
      const [id] = await quarantine([JSON.stringify(broken)]);
      const cli = (...args: string[]) =>
        promisify(execFile)(process.execPath, ['bin/tool-audit.mjs', 'quarantine', ...args, '--url', address], {
          env: { ...process.env, TOOL_AUDIT_API_KEY: BOTH_KEY, LOG_LEVEL: 'silent' },
        });
      const listed = await cli('list', '--reason', 'I5_args_hash');
      expect(listed.stdout).toContain(id);
      expect((await cli('show', id as string, '--raw')).stdout).toBe(JSON.stringify(broken));
      const fixedFile = join(dir, 'fixed.json');
      writeFileSync(fixedFile, JSON.stringify(toolCall({ call_id: broken.call_id })));
      const replayed = await cli('replay', id as string, '--packet', fixedFile);
      expect(replayed.stdout).toContain(`${id}: accepted (corrected)`);
      expect(await count(ch, db, 'tool_invocations', `call_id = '${broken.call_id}'`)).toBe(1);
      expect((await cli('show', id as string)).stdout).toMatch(/replay .* by key:[0-9a-f]{12} \(corrected\): accepted/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
