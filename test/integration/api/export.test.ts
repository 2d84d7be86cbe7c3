/**
 * GET /v1/export and `tool-audit export`: every stored row of the range, nothing else, args byte
 * for byte — judged by what the test sent, and by Python (pyarrow for Parquet, the csv module for
 * CSV) hashing each exported args itself.
 */
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { RawPacket } from '../../../ingest/rows.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { canonicalArgs } from '../../../schemas/canonical-json.ts';
import { doorOf, freshDatabase } from '../../helpers/clickhouse.ts';
import { dependency, outputArtifact, toolCall } from '../../helpers/packets.ts';
import { readApp } from '../../helpers/read-app.ts';

const run = promisify(execFile);
const root = new URL('../../../', import.meta.url).pathname;
const PYTHON = join(root, '.services/venv/bin/python');
const CHECK = join(import.meta.dirname, 'python', 'export_check.py');
const FROM = Date.parse('2026-11-20T00:00:00Z');
const TO = Date.parse('2026-11-21T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

// Args a careless export would break: non-ASCII, emoji (astral), JSON escapes, a value split
// across structure, control characters, a long string.
const argsOf = (i: number) => ({
  q: `naïve café 限 ${i}`,
  emoji: '🧪🚀'.repeat(i % 3),
  escapes: 'quote " backslash \\ slash / newline \n tab \t nul-ish \u0001',
  split: ['/etc', '/passwd'],
  nested: { n: i, f: i / 7, big: 2 ** 53 - i, deep: [{ x: null }, true] },
  long: 'x'.repeat(i === 3 ? 70_000 : 10),
});

let offset = 0;
const kafka = (value: unknown): RawPacket => ({ raw: JSON.stringify(value), source: { kind: 'kafka', topic: 'export-test', partition: 0, offset: String(offset++) } });

describe('GET /v1/export', () => {
  let app: FastifyInstance;
  let db: string;
  let door: ReturnType<typeof doorOf>;
  const inRange: ReturnType<typeof toolCall>[] = [];
  const outside: ReturnType<typeof toolCall>[] = [];
  const outputs: ReturnType<typeof outputArtifact>[] = [];

  beforeAll(async () => {
    const fresh = await freshDatabase('export');
    db = fresh.db;
    door = doorOf(fresh.ch, db);
    const writer = createSegmentWriter({ clickhouse: door, maxPacketBytes: 4 << 20, dedupCacheEntries: 0, metrics: new MetricsRegistry(), logger: silentLogger() });
    for (let i = 0; i < 240; i++) inRange.push(toolCall({ args: argsOf(i), created_at: iso(FROM + i * 300_000 + (i % 4)) }, i % 5 === 0 ? null : `task-${i % 3}`));
    outside.push(toolCall({ created_at: iso(FROM - 1) }, 'task-0'), toolCall({ created_at: iso(TO) }, 'task-0'));
    for (const c of inRange.slice(0, 30)) outputs.push(outputArtifact(c.call_id, `résultat ${c.call_id} 🧾`, 'text', { created_at: c.invocation.created_at }));
    const deps = inRange.slice(1, 11).map((c, i) => dependency({ task_id: c.invocation.task_id ?? 'task-x', preceding_call_id: (inRange[i] as typeof c).call_id, succeeding_call_id: c.call_id }));
    const packets = [...inRange, ...outside, ...outputs, ...deps];
    expect((await writer.write(packets.map(kafka))).every((o) => o.status === 'accepted')).toBe(true);
    await door.insertRows('violations', [
      { key: 'v1', row: { violation_key: 'I4:one', invariant: 'I4', packet_type: 'tool_call', ids: [inRange[1]?.call_id], detail: 'in range', detected_at: iso(FROM + 5) } },
      { key: 'v2', row: { violation_key: 'I4:two', invariant: 'I4', packet_type: 'tool_call', ids: [inRange[2]?.call_id], detail: 'outside', detected_at: iso(TO + 5) } },
    ]);
    app = readApp({ door, db, keys: [] });
  }, 120_000);
  afterAll(async () => app?.close());

  const get = (q: string) => app.inject({ method: 'GET', url: `/v1/export?from=${iso(FROM)}&to=${iso(TO)}&${q}` });
  // The calls' table order: by task ('' for none, first), then created_at (unique per task here).
  const byTime = (a: ReturnType<typeof toolCall>, b: ReturnType<typeof toolCall>) =>
    (a.invocation.task_id ?? '').localeCompare(b.invocation.task_id ?? '') || a.invocation.created_at.localeCompare(b.invocation.created_at);

  it('exports the calls of the range as NDJSON, by task then time, args as sent', async () => {
    const res = await get('kind=calls');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = res.body.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const want = [...inRange].sort(byTime);
    expect(lines.map((l) => l.call_id)).toEqual(want.map((c) => c.call_id));
    for (const [i, l] of lines.entries()) {
      const sent = want[i] as (typeof want)[number];
      expect(JSON.parse(l.args as string)).toEqual(sent.invocation.args);
      expect(l.args_hash).toBe(sent.invocation.args_hash);
      expect(createHash('sha256').update(l.args as string, 'utf8').digest('hex')).toBe(sent.invocation.args_hash);
      expect(l.task_id).toBe(sent.invocation.task_id);
      expect(l.created_at).toBe(sent.invocation.created_at);
    }
  });

  it('one task only', async () => {
    const res = await get('kind=calls&task=task-1');
    const ids = res.body.trimEnd().split('\n').map((l) => (JSON.parse(l) as { call_id: string }).call_id);
    expect(ids).toEqual([...inRange].filter((c) => c.invocation.task_id === 'task-1').sort(byTime).map((c) => c.call_id));
  });

  it.each(['parquet', 'csv'] as const)('exports %s that Python reads back with every row and args byte for byte', async (format) => {
    const res = await get(`kind=calls&format=${format}`);
    expect(res.statusCode).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'export-'));
    const file = join(dir, `calls.${format}`);
    writeFileSync(file, res.rawPayload);
    const { stdout } = await run(PYTHON, [CHECK, format, file], { maxBuffer: 64 << 20 });
    const got = JSON.parse(stdout) as { rows: Array<{ call_id: string; task_id: string | null; created_at: string; args_hash: string; args: string }>; bad_hashes: string[]; schema: Record<string, string> };
    expect(got.bad_hashes).toEqual([]);
    const want = [...inRange].sort(byTime);
    expect(got.rows.map((r) => [r.call_id, r.task_id, r.created_at, r.args_hash, r.args])).toEqual(want.map((c) => [c.call_id, c.invocation.task_id, c.invocation.created_at, c.invocation.args_hash, canonicalArgs(c.invocation.args)]));
    if (format === 'parquet') expect(got.schema).toMatchObject({ call_id: 'string', args: 'string', created_at: expect.stringMatching(/^timestamp\[/) as unknown as string });
  });

  it('exports outputs, dependencies and violations of the range', async () => {
    const lines = async (q: string) => (await get(q)).body.trimEnd().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect((await lines('kind=outputs')).map((o) => [o.output_id, o.call_id, o.sample]).sort()).toEqual(outputs.map((o) => [o.output.output_id, o.output.call_id, o.output.sample]).sort());
    // Dependencies are ranged by when they were stored: all of them, stored just now, are outside the range.
    expect(await lines('kind=dependencies')).toEqual([]);
    const now = await app.inject({ method: 'GET', url: `/v1/export?kind=dependencies&from=${iso(Date.now() - 3_600_000)}` });
    expect(now.body.trimEnd().split('\n').length).toBe(10);
    expect((await lines('kind=violations')).map((v) => v.violation_key)).toEqual(['I4:one']);
    expect((await lines(`kind=violations&task=${String(inRange[1]?.invocation.task_id)}`)).map((v) => v.violation_key)).toEqual(['I4:one']);
    expect(await lines('kind=violations&task=task-none')).toEqual([]);
  });

  it('refuses what it cannot answer, naming the parameter', async () => {
    for (const [q, why] of [
      ['kind=tasks', /kind/],
      ['kind=calls&format=xml', /format/],
      ['kind=calls&limit=5', /unknown parameter/],
    ] as const) {
      const res = await get(q);
      expect(res.statusCode, q).toBe(400);
      expect((res.json() as { message: string }).message).toMatch(why);
    }
    const reversed = await app.inject({ method: 'GET', url: `/v1/export?kind=calls&from=${iso(TO)}&to=${iso(FROM)}` });
    expect(reversed.statusCode).toBe(400);
  });

  it('bounds exports: a window over the limit is refused naming it; past the exports one client may run at once, 429 until one ends', async () => {
    const long = await app.inject({ method: 'GET', url: `/v1/export?kind=calls&from=1970-01-01T00:00:00Z&to=${iso(TO)}` });
    expect(long.statusCode).toBe(400);
    expect((long.json() as { message: string }).message).toMatch(/at most 93 days/);
    const one = readApp({ door, db, keys: [], exportLimits: { maxDays: 93, perClient: 1, total: 4 } });
    const at = (remoteAddress: string) => one.inject({ method: 'GET', url: `/v1/export?kind=calls&from=${iso(FROM)}&to=${iso(TO)}`, remoteAddress });
    // Three at once from one address: one runs, two wait; another address is not held back.
    const codes = await Promise.all([at('10.0.0.1'), at('10.0.0.1'), at('10.0.0.1'), at('10.0.0.2')]);
    expect(codes.map((r) => r.statusCode).sort()).toEqual([200, 200, 429, 429]);
    const refused = codes.find((r) => r.statusCode === 429);
    expect(refused?.headers['retry-after']).toBe('5');
    // Ended: the next one runs.
    expect((await at('10.0.0.1')).statusCode).toBe(200);
    await one.close();
  });

  it('tool-audit export writes the same file from a running server', async () => {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const dir = mkdtempSync(join(tmpdir(), 'export-cli-'));
    const out = join(dir, 'calls.ndjson');
    const cli = (...args: string[]) => run(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'export', ...args], { env: { ...process.env, TOOL_AUDIT_DATA_DIR: dir }, maxBuffer: 64 << 20 });
    await cli('--kind', 'calls', '--from', iso(FROM), '--to', iso(TO), '--out', out, '--url', address);
    expect(readFileSync(out, 'utf8')).toBe((await get('kind=calls')).body);
    // A usage error: status 2, no file.
    const bad = join(dir, `bad-${randomUUID()}.ndjson`);
    await expect(cli('--kind', 'nope', '--out', bad, '--url', address)).rejects.toMatchObject({ code: 2 });
    expect(existsSync(bad)).toBe(false);
  });
});
