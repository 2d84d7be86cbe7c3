/**
 * optimization_hint packets from external producers: over HTTP (POST /v1/packets) and over Kafka
 * they land in workflow_optimizations once; bad ones are quarantined with their reason; GET
 * /v1/hints pages them newest first and filters by kind; the CLI renders them.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { renderHints } from '../../../cli/hints.ts';
import { count, rows } from '../../helpers/clickhouse.ts';
import { testKafka } from '../../helpers/kafka.ts';
import { goodTwiceAndBad, packetApp } from '../../helpers/packet-trips.ts';

const DAY = 86_400_000;
const BASE = Date.now() - 2 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();

function hintPacket(over: Record<string, unknown> = {}, i = 0) {
  return {
    type: 'optimization_hint',
    hint: {
      hint_id: randomUUID(),
      kind: 'cache_candidate',
      tool_ids: ['search_web'],
      task_ids_sample: ['task-1'],
      evidence: { ttl_ms: 300_000, hits: 12 },
      estimated_savings_ms: 1200,
      estimated_savings_usd: 0.5,
      window_from: iso(BASE - DAY),
      window_to: iso(BASE),
      created_at: iso(BASE + i * 1000),
      ...over,
    },
  };
}


describe('optimization_hint packets', () => {
  it('over HTTP: stored once, redelivery a duplicate, bad ones quarantined with their reason; GET /v1/hints pages and filters', async () => {
    const { ch, db, app, c } = await packetApp('hintp');
    const good = [0, 1, 2, 3, 4].map((i) => hintPacket(i === 1 ? { kind: 'retry_storm', tool_ids: ['deploy'], evidence: { errors: { 'HTTP 503': 7 } } } : i === 3 ? { kind: 'bundle_candidate', tool_ids: ['a', 'b'] } : {}, i));
    const first = (await c.postPackets(JSON.stringify(good))).json();
    expect(first).toMatchObject({ accepted: 5, rejected: 0, duplicates: 0 });
    expect(first.results[0]).toMatchObject({ packet_type: 'optimization_hint', ids: [good[0]?.hint.hint_id] });

    const reused = hintPacket({ hint_id: good[0]?.hint.hint_id, estimated_savings_ms: 1 });
    const bad = [
      good[2],
      reused,
      hintPacket({ window_from: iso(BASE), window_to: iso(BASE - DAY) }),
      hintPacket({ kind: 'bundle_candidate', tool_ids: ['only_one'] }),
      hintPacket({ kind: 'prefetch_candidate' }),
      hintPacket({ surprise: true }),
      hintPacket({ estimated_savings_ms: -5 }),
    ];
    const second = (await c.postPackets(JSON.stringify(bad))).json();
    expect(second.results.map((r: { status: string; reason?: { code: string } }) => r.reason?.code ?? r.status)).toEqual([
      'duplicate',
      'I1_hint_id_reused',
      'hint_window',
      'hint_tools',
      'schema',
      'schema',
      'schema',
    ]);
    expect(await count(ch, db, 'workflow_optimizations')).toBe(5);
    const q = await rows<{ reason_code: string; packet_type: string; raw: string }>(ch, 'SELECT reason_code, packet_type, raw FROM {db:Identifier}.quarantine ORDER BY source_key', { db });
    expect(q.map((r) => r.reason_code).sort()).toEqual(['I1_hint_id_reused', 'hint_tools', 'hint_window', 'schema', 'schema', 'schema']);
    expect(q.every((r) => r.packet_type === 'optimization_hint')).toBe(true);
    expect(q.map((r) => JSON.parse(r.raw).hint.hint_id)).toContain(reused.hint.hint_id);

    // Newest first (created_at), two per page, then a kind.
    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { hints: Array<{ hint_id: string }>; next_cursor: string | null } = (await c.get(`/v1/hints?limit=2&from=${iso(BASE - DAY)}${cursor ? `&cursor=${cursor}` : ''}`)).json();
      pages.push(...page.hints.map((h: { hint_id: string }) => h.hint_id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(pages).toEqual([4, 3, 2, 1, 0].map((i) => good[i]?.hint.hint_id));
    const storms = (await c.get(`/v1/hints?kind=retry_storm&from=${iso(BASE - DAY)}`)).json();
    expect(storms.hints).toEqual([{ ...good[1]?.hint, origin: 'producer' }]);
    expect((await c.get('/v1/hints?kind=nope')).statusCode).toBe(400);

    const text = renderHints((await c.get(`/v1/hints?from=${iso(BASE - DAY)}&limit=4`)).json());
    expect(text.split('\n')[0]).toMatch(/^created\s+kind\s+tools\s+saves\s+saves \$\s+evidence$/);
    expect(text).toMatch(/bundle_candidate\s+a → b\s+1\.2 s\s+\$0\.5000/);
    expect(text).toMatch(/retry_storm\s+deploy\s+.*\{"errors":\{"HTTP 503":7\}\}/);
    expect(text).toMatch(/cache_candidate\s+search_web\s+1\.2 s\s+\$0\.5000\s+\{"ttl_ms":300000,"hits":12\}/);
    expect(text).toMatch(/… more: --cursor \S+$/);
    await app.close();
  });

  describe('over Kafka', () => {
    const kafka = testKafka();

    it('stores a producer hint from the topic once and quarantines a bad one', async () => {
      const good = hintPacket();
      const { ch, db, names } = await goodTwiceAndBad(kafka, { name: 'hints', key: good.hint.hint_id, good, bad: hintPacket({ window_to: iso(BASE - 2 * DAY) }), table: 'workflow_optimizations' });
      const [row] = await rows<{ hint_id: string; origin: string; source: string }>(ch, 'SELECT toString(hint_id) AS hint_id, toString(origin) AS origin, source FROM {db:Identifier}.workflow_optimizations', { db });
      expect(row).toMatchObject({ hint_id: good.hint.hint_id, origin: 'producer' });
      expect(row?.source).toMatch(new RegExp(`^kafka:${names.topic}/`));
      expect(await rows(ch, 'SELECT reason_code FROM {db:Identifier}.quarantine', { db })).toEqual([{ reason_code: 'hint_window' }]);
    });
  });
});
