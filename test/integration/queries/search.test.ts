/**
 * GET /v1/search on embedded ClickHouse with the text indexes of migration 031: each query's hits
 * against a hand-written oracle — whole tokens, phrases on token boundaries, case, non-ASCII and
 * emoji (stored as \u escapes), JSON escapes, values split across JSON structure, every field
 * (args, result summary, error, output sample, content beyond the sample), filters, pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { RawPacket } from '../../../ingest/rows.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { doorOf, freshDatabase } from '../../helpers/clickhouse.ts';
import { outputArtifact, toolCall } from '../../helpers/packets.ts';
import { readApp } from '../../helpers/read-app.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();
let offset = 0;
const kafka = (value: unknown): RawPacket => ({ raw: JSON.stringify(value), source: { kind: 'kafka', topic: 'search-test', partition: 0, offset: String(offset++) } });

// Named calls, each with what the oracle says it holds.
const calls = {
  passwd: toolCall({ args: { path: '/etc/passwd' }, created_at: at(1) }, 'task-a'),
  mypasswd: toolCall({ args: { path: '/etc/mypasswd' }, created_at: at(2) }, 'task-a'),
  unicode: toolCall({ args: { q: 'café 限 🧪 rocket' }, created_at: at(3) }, 'task-b'),
  windows: toolCall({ args: { file: 'C:\\temp\\log "quoted"' }, created_at: at(4) }, 'task-b'),
  split: toolCall({ args: { a: 'foo', b: 'bar' }, created_at: at(5) }, 'task-b'),
  customer: toolCall({ tool_id: 'crm_lookup', args: { note: 'Customer ID CUST-9912' }, created_at: at(6) }, 'task-c'),
  failed: toolCall({ status: 'error', error: 'connection reset by peer', result_summary: {}, created_at: at(7) }, 'task-c'),
  summary: toolCall({ args: { q: 'summary' }, result_summary: { headline: 'Yearly Income up' }, created_at: at(8) }, null),
  upper: toolCall({ args: { q: 'CAFÉ CRÈME' }, created_at: at(11) }, 'task-e'),
  boundary: toolCall({ args: { s: 'port 80 and support 8080' }, created_at: at(10) }, 'task-d'),
  late: toolCall({ args: { path: '/etc/passwd' }, created_at: at(24 * 60) }, 'task-z'),
};
const longContent = `résultat 🧾 ${'table row '.repeat(80)} zebra42 end`;
const output = outputArtifact(calls.summary.call_id, longContent, 'text', { created_at: at(9) });
const common = Array.from({ length: 23 }, (_, i) => toolCall({ args: { q: `common word ${i}` }, created_at: at(100 + i) }, `task-common-${i % 3}`));

describe('GET /v1/search', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    const { ch, db } = await freshDatabase('search');
    const door = doorOf(ch, db);
    const writer = createSegmentWriter({ clickhouse: door, maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics: new MetricsRegistry(), logger: silentLogger() });
    const outcomes = await writer.write([...Object.values(calls), output, ...common].map(kafka));
    expect(outcomes.every((o) => o.status === 'accepted')).toBe(true);
    app = readApp({ door, db, keys: [] });
  }, 60_000);
  afterAll(async () => app?.close());

  type Hit = { kind: string; call_id: string; output_id: string | null; field: string; excerpt: string; task_id: string | null; tool_id: string; created_at: string };
  const search = async (q: string, extra = '', window = `from=${at(0)}&to=${at(60)}`) => {
    const res = await app.inject({ method: 'GET', url: `/v1/search?q=${encodeURIComponent(q)}&${window}${extra}` });
    return { status: res.statusCode, body: res.json() as { hits: Hit[]; next_cursor: string | null; message?: string } };
  };
  const found = async (q: string, extra = '') => {
    const r = await search(q, extra);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.hits.map((h) => `${h.field}:${h.output_id ?? h.call_id}`);
  };
  const name = (c: { call_id: string }, field = 'args') => `${field}:${c.call_id}`;

  it('matches whole tokens and phrases on token boundaries, in any case', async () => {
    expect(await found('passwd')).toEqual([name(calls.passwd)]);
    expect(await found('"/etc/passwd"')).toEqual([name(calls.passwd)]);
    expect(await found('/etc/passwd')).toEqual([name(calls.passwd)]);
    expect(await found('mypasswd')).toEqual([name(calls.mypasswd)]);
    expect(await found('"CUST-9912"')).toEqual([name(calls.customer)]);
    expect(await found('cust-9912 customer')).toEqual([name(calls.customer)]);
    expect(await found('cust-991')).toEqual([]);
    // Every token of "port 8080" is there, and the text too, but only inside "support 8080".
    expect(await found('"port 8080"')).toEqual([]);
    expect(await found('"support 8080"')).toEqual([name(calls.boundary)]);
    expect(await found('"port 80"')).toEqual([name(calls.boundary)]);
    expect(await found('"reset by peer"')).toEqual([name(calls.failed, 'error')]);
    expect(await found('"yearly income"')).toEqual([name(calls.summary, 'result_summary')]);
  });

  it('finds non-ASCII, emoji and JSON-escaped values as written, and no phrase across JSON structure', async () => {
    // Stored escaped, É is \u00c9 and é \u00e9: either case of the query finds both.
    expect(await found('café')).toEqual([name(calls.upper), name(calls.unicode)]);
    expect(await found('CAFÉ')).toEqual([name(calls.upper), name(calls.unicode)]);
    expect(await found('"café crème"')).toEqual([name(calls.upper)]);
    expect(await found('CAFÉ rocket')).toEqual([name(calls.unicode)]);
    expect(await found('限')).toEqual([name(calls.unicode)]);
    expect(await found('🧪')).toEqual([name(calls.unicode)]);
    expect(await found('"café 限 🧪 rocket"')).toEqual([name(calls.unicode)]);
    expect(await found('"C:\\temp\\log"')).toEqual([name(calls.windows)]);
    expect(await found('"log "quoted')).toEqual([name(calls.windows)]);
    // foo and bar are both in one args, but not as the phrase "foo bar".
    expect(await found('foo bar')).toEqual([name(calls.split)]);
    expect(await found('"foo bar"')).toEqual([]);
  });

  it('looks in output samples and in full contents beyond the sample', async () => {
    const zebra = (await search('zebra42')).body.hits;
    expect(zebra.map((h) => [h.kind, h.field, h.output_id, h.call_id])).toEqual([['output', 'content', output.output.output_id, calls.summary.call_id]]);
    expect(zebra[0]?.excerpt).toContain('zebra42');
    expect(await found('résultat 🧾')).toEqual([`sample:${output.output.output_id}`, `content:${output.output.output_id}`]);
    expect(await found('résultat', '&field=sample')).toEqual([`sample:${output.output.output_id}`]);
  });

  it('filters by tool, status, task, agent, orchestrator and time', async () => {
    expect(await found('customer', '&tool_id=crm_lookup')).toEqual([name(calls.customer)]);
    expect(await found('customer', '&tool_id=search_web')).toEqual([]);
    expect(await found('reset', '&status=error')).toEqual([name(calls.failed, 'error')]);
    expect(await found('reset', '&status=success')).toEqual([]);
    expect(await found('passwd', '&task_id=task-a')).toEqual([name(calls.passwd)]);
    expect(await found('passwd', '&task_id=task-b')).toEqual([]);
    expect(await found('passwd', '&agent_id=L&orchestrator=gateway')).toEqual([name(calls.passwd)]);
    expect(await found('zebra42', '&agent_id=nobody')).toEqual([]);
    const later = await search('passwd', '', `from=${at(0)}&to=${at(2 * 24 * 60)}`);
    expect(later.body.hits.map((h) => h.call_id)).toEqual([calls.late.call_id, calls.passwd.call_id]);
  });

  it('pages newest first through every hit exactly once', async () => {
    const seen: Hit[] = [];
    let cursor: string | null = null;
    do {
      const r = await search('common', `&limit=7${cursor ? `&cursor=${cursor}` : ''}`, `from=${at(0)}&to=${at(200)}`);
      expect(r.status).toBe(200);
      expect(r.body.hits.length).toBeLessThanOrEqual(7);
      seen.push(...r.body.hits);
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(seen.map((h) => h.call_id)).toEqual([...common].reverse().map((c) => c.call_id));
    expect(seen.every((h) => h.excerpt.includes('common'))).toBe(true);
  });

  it('answers no hits without q, and refuses what it cannot search, naming why', async () => {
    expect((await app.inject({ method: 'GET', url: '/v1/search' })).json()).toEqual({ hits: [], next_cursor: null });
    for (const [q, extra, why] of [
      ['  ""  ', '', /at least one term/],
      ['!!! ...', '', /no letter or digit/],
      ['passwd', '&field=nothing', /field/],
      ['x'.repeat(501), '', /q/],
      ['passwd', '&status=broken', /status/],
    ] as const) {
      const r = await search(q, extra);
      expect(r.status, q + extra).toBe(400);
      expect(r.body.message).toMatch(why);
    }
  });
});
