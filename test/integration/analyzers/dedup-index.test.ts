/**
 * Dedup candidates through the dedup index (dedup_repeats): exact before the indexer ran, after
 * it ran, after more calls arrived that it has not seen (repeats of indexed groups and of former
 * singletons), with the two-pass fallback, over windows; and the indexer is idempotent.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { dedupCandidates, indexedSince, type DedupParams } from '../../../queries/dedup-candidates.ts';
import { dedupWatermark, refreshDedupIndex } from '../../../analyzers/dedup-index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { count, freshDatabase, rows, doorOf } from '../../helpers/clickhouse.ts';
import { toolCall } from '../../helpers/packets.ts';
import { approx } from '../../helpers/read-harness.ts';
import { oracle, type Win } from '../../helpers/read-oracle.ts';
import { generateWorkload, uuidOf, type GenInvocation, type Workload } from '../../helpers/read-workload.ts';

let ch: ClickHouseClient;
let db: string;
const ALL: Win = { from: 0, to: Date.UTC(2200, 0, 1) };
const baseMs = Date.now() - 2 * 86_400_000;
const a = generateWorkload(31, baseMs);
const seen: Workload = { packets: [], invocations: [], outputs: [], dependencies: [], violations: [] };

async function ingest(packets: object[]) {
  const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 10, metrics: new MetricsRegistry(), logger: silentLogger() });
  const out = await writer.write(packets.map((p, index) => ({ raw: JSON.stringify(p), source: { kind: 'http', requestId: `d${Date.now()}`, index } })));
  expect(out.filter((o) => o.status !== 'accepted')).toEqual([]);
}

/** Every page of dedup candidates, with the totals of the first. */
async function dedup(extra: Partial<DedupParams> = {}, win: Win = ALL) {
  const groups = [];
  let cursor: string | undefined;
  let totals;
  for (;;) {
    const r = await dedupCandidates(doorOf(ch, db), db, { minCount: 2, window: { fromMs: win.from, toMs: win.to }, limit: 3, indexOverlapMs: 0, ...extra, ...(cursor ? { cursor } : {}) }, DEFAULT_QUERY_CONTEXT);
    totals ??= r.totals;
    groups.push(...r.groups);
    if (!r.next_cursor) return approx({ groups, totals });
    cursor = r.next_cursor;
  }
}
const expected = (win: Win = ALL, min = 2) => approx(oracle(seen).dedup(min, win));

beforeAll(async () => {
  ({ ch, db } = await freshDatabase('dx'));
  await ingest(a.packets);
  seen.invocations.push(...a.invocations);
});

describe('dedup index', () => {
  it('is exact before the indexer ever ran, and so is the two-pass fallback', async () => {
    expect(await dedupWatermark(doorOf(ch, db))).toBe(0);
    expect(await dedup()).toEqual(expected());
    expect(await dedup({ liveMaxRows: 0 })).toEqual(expected());
  });

  it('copies exactly the calls of repeated keys, once, however often it runs and in however many parts', async () => {
    // A backlog of more than partCalls calls is copied from the prefixes key_counts counted twice,
    // in parts of at most partCalls candidate calls. A prefix counted too often (as after an insert
    // counted twice) only adds candidates: here every single call's prefix is, and none is copied.
    const partCalls = Math.ceil(a.invocations.length / 10);
    await ch.command({ query: 'INSERT INTO {db:Identifier}.key_counts SELECT toUInt32(bitShiftRight(args_key, 32)), 1, toStartOfMonth(created_at) FROM {db:Identifier}.tool_invocations', query_params: { db } });
    const [candidates] = await rows<{ c: string }>(ch, 'SELECT toString(sum(n)) AS c FROM {db:Identifier}.key_counts FINAL WHERE n >= 2', { db });
    expect(Number(candidates?.c)).toBe(2 * a.invocations.length);
    const r = await refreshDedupIndex(doorOf(ch, db), 0, partCalls);
    expect(r.scanned).toBe(a.invocations.length);
    const keyCount = new Map<string, number>();
    for (const i of seen.invocations) keyCount.set(`${i.tool_id}|${i.args_hash}`, (keyCount.get(`${i.tool_id}|${i.args_hash}`) ?? 0) + 1);
    const repeated = seen.invocations.filter((i) => (keyCount.get(`${i.tool_id}|${i.args_hash}`) ?? 0) >= 2).map((i) => i.call_id).sort();
    expect(r.copied).toBe(repeated.length);
    await refreshDedupIndex(doorOf(ch, db), 0);
    const stored = await rows<{ id: string }>(ch, 'SELECT toString(call_id) AS id FROM {db:Identifier}.dedup_repeats ORDER BY id', { db });
    expect(stored.map((x) => x.id)).toEqual(repeated);
    expect(await dedup()).toEqual(expected());
  });

  it('stays exact for calls the indexer has not seen yet, then indexes them', async () => {
    await new Promise((r) => setTimeout(r, 20)); // later ingested_at than the watermark
    const singles = a.invocations.filter((i) => a.invocations.filter((j) => j.tool_id === i.tool_id && j.args_hash === i.args_hash).length === 1);
    const groups = a.invocations.filter((i) => !singles.includes(i));
    const later = (i: GenInvocation, k: number) =>
      toolCall({ call_id: uuidOf(`later-${k}`), tool_id: i.tool_id, agent_id: 'L', args: i.args, duration_ms: 1000 + k, cost_usd: k % 2 ? 0.25 : null, created_at: new Date(baseMs + 40 * 3_600_000 + k * 1000).toISOString() }, 'task-later');
    const b = [...singles.slice(0, 4).map(later), ...groups.slice(0, 3).map((i, k) => later(i, 10 + k)), toolCall({ call_id: uuidOf('later-unique'), args: { unique: true }, created_at: new Date(baseMs + 41 * 3_600_000).toISOString() }, 'task-later')];
    await ingest(b);
    seen.invocations.push(...b.map((p) => p.invocation as unknown as GenInvocation));
    expect(await dedup()).toEqual(expected());
    const half: Win = { from: baseMs + 6 * 3_600_000, to: baseMs + 45 * 3_600_000 };
    expect(await dedup({}, half)).toEqual(expected(half));
    expect(await dedup({ minCount: 3 })).toEqual(expected(ALL, 3));
    await refreshDedupIndex(doorOf(ch, db), 0);
    expect(await dedup()).toEqual(expected());
    expect(await dedup({ liveMaxRows: 0 })).toEqual(expected());
    expect(await count(ch, db, 'dedup_repeats')).toBe(Number((await rows<{ u: string }>(ch, 'SELECT uniqExact(call_id) AS u FROM {db:Identifier}.dedup_repeats', { db }))[0]?.u));
  });

  it('moves its watermark to its own start once ingest pauses (readers then gather no tail by hand), and still indexes what comes next', async () => {
    const overlap = 300;
    const door = doorOf(ch, db);
    await refreshDedupIndex(door, overlap);
    const newest = async () => Number((await rows<{ ms: string }>(ch, 'SELECT toUnixTimestamp64Milli(max(ingested_at)) AS ms FROM {db:Identifier}.tool_invocations', { db }))[0]?.ms);
    const last = await newest();
    await new Promise((r) => setTimeout(r, 2 * overlap));
    const idle = await refreshDedupIndex(door, overlap);
    expect(idle.watermarkMs).toBeGreaterThan(last + overlap);
    expect(await dedupWatermark(door)).toBe(idle.watermarkMs);
    const since = await indexedSince(door, db, 1000, overlap, DEFAULT_QUERY_CONTEXT);
    expect(since).toBe(idle.watermarkMs - overlap);
    expect(await count(ch, db, 'tool_invocations', `ingested_at > fromUnixTimestamp64Milli(${since}, 'UTC')`)).toBe(0);
    expect(await dedup({ indexOverlapMs: overlap })).toEqual(expected());
    // A repeat of a single call, ingested after the idle watermark: live for readers, then indexed.
    const single = a.invocations.find((i) => seen.invocations.filter((j) => j.tool_id === i.tool_id && j.args_hash === i.args_hash).length === 1);
    if (!single) throw new Error('the workload has no single call left');
    const p = toolCall({ call_id: uuidOf('after-idle'), tool_id: single.tool_id, agent_id: 'I', args: single.args, created_at: new Date(baseMs + 42 * 3_600_000).toISOString() }, 'task-idle');
    await ingest([p]);
    seen.invocations.push(p.invocation as unknown as GenInvocation);
    expect(await newest()).toBeGreaterThan(idle.watermarkMs);
    expect(await dedup({ indexOverlapMs: overlap })).toEqual(expected());
    await refreshDedupIndex(door, overlap);
    const copied = await rows<{ id: string }>(ch, 'SELECT toString(call_id) AS id FROM {db:Identifier}.dedup_repeats WHERE call_id IN ({a:UUID}, {b:UUID})', { db, a: uuidOf('after-idle'), b: single.call_id });
    expect(copied.length).toBe(2);
    expect(await dedup({ indexOverlapMs: overlap })).toEqual(expected());
  });

  it('finds the repeats of a small backlog by scanning, without the counts (a count a crash left short)', async () => {
    await new Promise((r) => setTimeout(r, 20));
    const single = a.invocations.find((i) => seen.invocations.filter((j) => j.tool_id === i.tool_id && j.args_hash === i.args_hash).length === 1);
    if (!single) throw new Error('the workload has no single call left');
    const p = toolCall({ call_id: uuidOf('uncounted'), tool_id: single.tool_id, agent_id: 'U', args: single.args, created_at: new Date(baseMs + 43 * 3_600_000).toISOString() }, 'task-uncounted');
    await ch.command({ query: 'TRUNCATE TABLE {db:Identifier}.key_counts', query_params: { db } });
    await ingest([p]);
    seen.invocations.push(p.invocation as unknown as GenInvocation);
    await refreshDedupIndex(doorOf(ch, db), 0);
    const copied = await rows<{ id: string }>(ch, 'SELECT toString(call_id) AS id FROM {db:Identifier}.dedup_repeats WHERE call_id IN ({a:UUID}, {b:UUID})', { db, a: uuidOf('uncounted'), b: single.call_id });
    expect(copied.length).toBe(2);
    expect(await dedup()).toEqual(expected());
  });

  it('answers exactly when two keys share an args_key (a simulated cityHash64 collision)', async () => {
    const [victim] = await rows<{ k: string }>(ch, 'SELECT toString(args_key) AS k FROM {db:Identifier}.dedup_repeats LIMIT 1', { db });
    await ch.insert({
      table: `${db}.dedup_repeats`,
      values: [{ args_key: victim?.k, tool_id: 'impostor', args_hash: 'f'.repeat(64), call_id: uuidOf('impostor'), created_at: new Date(baseMs + 3_600_000).toISOString().replace('T', ' ').replace('Z', ''), duration_ms: 5, cost_usd: null }],
      format: 'JSONEachRow',
    });
    expect(await dedup()).toEqual(expected());
  });
});
