/**
 * Cache simulation and TTL curve against a brute-force replay written here: every call checked
 * against every earlier entry of its key, in (created_at, call_id) order. The workload has
 * created_at ties, failures, calls exactly at an entry's expiry, non-idempotent tools, a TTL of 0,
 * a tool no manifest declares, and costs with nulls.
 */
import { describe, expect, it } from 'vitest';
import { applyManifest } from '../../../analyzers/manifest-store.ts';
import { cacheSimulation, CURVE_TTLS_MS, ttlCurve } from '../../../queries/cache-simulation.ts';
import { DEFAULT_QUERY_CONTEXT, type StatementRunner } from '../../../queries/sql.ts';
import { refreshDedupIndex } from '../../../analyzers/dedup-index.ts';
import { parseManifest, type Manifest } from '../../../schemas/tool-manifest.ts';
import { aggregatesFromEpoch, freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { bruteForce } from '../../helpers/cache-oracle.ts';
import { insertCalls, rawCall, rng, type RawCall } from '../../helpers/raw-calls.ts';

const T0 = Date.UTC(2026, 9, 1, 10);

function manifest(doc: Record<string, object>): Manifest {
  const r = parseManifest(Object.fromEntries(Object.entries(doc).map(([k, v]) => [k, { tool_id: k, ...v }])));
  if (!r.ok) throw new Error(r.errors.join('; '));
  return r.manifest;
}

const M = manifest({
  search: { idempotent: true, cache_ttl_ms: 300_000 },
  fetch: { idempotent: true, cache_ttl_ms: 60_000 },
  lookup: { idempotent: true, cache_ttl_ms: 0 },
  email_send: { idempotent: false, cache_ttl_ms: 600_000 },
});

function workload(seed: number): RawCall[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const calls: RawCall[] = [];
  for (let i = 0; i < 1500; i++) {
    const tool = pick(['search', 'search', 'fetch', 'lookup', 'email_send', 'unknown_tool']);
    calls.push(
      rawCall({
        tool_id: tool,
        // A coarse clock (minutes and seconds) makes ties and exact expiries common.
        t: T0 + Math.floor(r() * 600) * 30_000 + pick([0, 0, 1, 999]),
        args: { k: Math.floor(r() * 6) },
        status: r() < 0.25 ? pick(['error', 'timeout'] as const) : 'success',
        duration_ms: Math.floor(r() * 5000),
        cost_usd: r() < 0.3 ? null : Math.round(r() * 1000) / 1000,
      }),
    );
  }
  // Exactly at expiry: an entry at T is not live at T + ttl.
  const args = { k: 'edge' };
  for (const dt of [0, 0, 59_999, 60_000, 60_001, 120_000]) calls.push(rawCall({ tool_id: 'fetch', t: T0 + 7 * 3600_000 + dt, args, duration_ms: 10, cost_usd: 0.5 }));
  return calls;
}

type Door = Awaited<ReturnType<typeof freshDatabase>>['door'];

/** The door, recording the name of every statement it reads with. */
function recording(door: Door): { door: StatementRunner; names: string[] } {
  const names: string[] = [];
  return { names, door: { read: (spec, params, ctx) => (names.push(spec.name), door.read(spec, params, ctx)) } };
}

/** Every answer of the simulation and the TTL curve against the brute force over `calls`. */
async function expectExact(door: StatementRunner, db: string, calls: RawCall[], liveMaxRows?: number, indexOverlapMs?: number): Promise<void> {
  const o = { liveMaxRows, indexOverlapMs };
  const window = { fromMs: T0, toMs: T0 + 86_400_000 };
  const of = (tool: string) => calls.filter((c) => c.tool_id === tool);
  const close = (a: number, b: number) => expect(a).toBeCloseTo(b, 6);

  const sim = await cacheSimulation(door, db, { window, ...o }, DEFAULT_QUERY_CONTEXT);
  const byTool = new Map(sim.tools.map((t) => [t.tool_id, t]));
  expect([...byTool.keys()].sort()).toEqual(['email_send', 'fetch', 'lookup', 'search', 'unknown_tool']);
  for (const [tool, ttl] of [['search', 300_000], ['fetch', 60_000]] as const) {
    const want = bruteForce(of(tool), ttl);
    const got = byTool.get(tool);
    expect(got).toMatchObject({ cacheable: true, ttl_ms: ttl, calls: want.calls, hits: want.hits, saved_ms: want.saved_ms });
    close(got?.saved_usd ?? -1, want.saved_usd);
    expect(want.hits).toBeGreaterThan(0);
  }
  for (const tool of ['lookup', 'email_send', 'unknown_tool']) expect(byTool.get(tool)).toMatchObject({ cacheable: false, hits: 0, saved_ms: 0, calls: of(tool).length });
  expect(sim.totals.calls).toBe(calls.length);
  expect(sim.totals.hits).toBe(sim.tools.reduce((s, t) => s + t.hits, 0));

  // A window with partial hours at both ends: calls per tool come from the hourly aggregates and the edges' calls.
  const edged = { fromMs: T0 + 17 * 60_000 + 1, toMs: T0 + 4 * 3600_000 + 5 * 60_000 };
  const inEdged = calls.filter((c) => c.t >= edged.fromMs && c.t < edged.toMs);
  const e = await cacheSimulation(door, db, { window: edged, ...o }, DEFAULT_QUERY_CONTEXT);
  const perTool = new Map<string, number>();
  for (const c of inEdged) perTool.set(c.tool_id, (perTool.get(c.tool_id) ?? 0) + 1);
  expect(new Map(e.tools.map((t) => [t.tool_id, t.calls]))).toEqual(perTool);
  expect(e.tools.find((t) => t.tool_id === 'search')?.hits).toBe(bruteForce(inEdged.filter((c) => c.tool_id === 'search'), 300_000).hits);
  const edgedCurve = await ttlCurve(door, db, { window: edged, ...o }, DEFAULT_QUERY_CONTEXT);
  expect(edgedCurve.calls).toBe(inEdged.filter((c) => ['search', 'fetch', 'lookup'].includes(c.tool_id)).length);

  // A given TTL overrides the manifest's, also where the manifest has 0; never for a non-idempotent tool.
  const given = await cacheSimulation(door, db, { window, ttlMs: 120_000, ...o }, DEFAULT_QUERY_CONTEXT);
  for (const tool of ['search', 'fetch', 'lookup']) {
    const want = bruteForce(of(tool), 120_000);
    expect(given.tools.find((t) => t.tool_id === tool)).toMatchObject({ cacheable: true, ttl_ms: 120_000, hits: want.hits, saved_ms: want.saved_ms });
  }
  expect(given.tools.find((t) => t.tool_id === 'email_send')).toMatchObject({ cacheable: false, hits: 0 });
  // One tool only.
  const one = await cacheSimulation(door, db, { window, toolId: 'fetch', ...o }, DEFAULT_QUERY_CONTEXT);
  expect(one.tools.map((t) => [t.tool_id, t.hits])).toEqual([['fetch', bruteForce(of('fetch'), 60_000).hits]]);

  // TTL curve of one tool and its suggested TTL.
  const curve = await ttlCurve(door, db, { toolId: 'search', window, ...o }, DEFAULT_QUERY_CONTEXT);
  const points = CURVE_TTLS_MS.map((ttl) => ({ ttl, ...bruteForce(of('search'), ttl) }));
  expect(curve.points.map((p) => [p.ttl_ms, p.hits, p.saved_ms])).toEqual(points.map((p) => [p.ttl, p.hits, p.saved_ms]));
  points.forEach((p, i) => close(curve.points[i]?.saved_usd ?? -1, p.saved_usd));
  const week = points[points.length - 1] as (typeof points)[number];
  const suggested = points.find((p) => p.saved_ms >= 0.9 * week.saved_ms && p.saved_usd >= 0.9 * week.saved_usd - 1e-9)?.ttl;
  expect(curve.suggested_ttl_ms).toBe(suggested);
  expect(curve.cacheable).toBe(true);
  expect(curve.calls).toBe(of('search').length);

  // Without a tool: the idempotent tools together (search, fetch, lookup; not email_send).
  const together = await ttlCurve(door, db, { window, ...o }, DEFAULT_QUERY_CONTEXT);
  const idem = [...of('search'), ...of('fetch'), ...of('lookup')];
  expect(together.calls).toBe(idem.length);
  expect(together.points.map((p) => p.hits)).toEqual(CURVE_TTLS_MS.map((ttl) => bruteForce(idem, ttl).hits));

  const notCacheable = await ttlCurve(door, db, { toolId: 'email_send', window, ...o }, DEFAULT_QUERY_CONTEXT);
  expect(notCacheable).toMatchObject({ cacheable: false, calls: of('email_send').length, suggested_ttl_ms: null });
  expect(notCacheable.points.every((p) => p.hits === 0)).toBe(true);
}

describe('cache simulation', () => {
  it('matches a brute-force replay per tool, at the manifest TTL and at a given TTL, and its TTL curve, whatever the dedup index holds', async () => {
    const { ch, db, door } = await freshDatabase('cs');
    await aggregatesFromEpoch(ch, db);
    const rec = recording(door);
    const calls = workload(21);
    // The edge key: entries at T (first call; the tie at T is a hit), expiry exactly at T + 60 s.
    expect(bruteForce(calls.filter((c) => c.args.k === 'edge'), 60_000).hits).toBe(3);
    await applyManifest(door, M, T0);
    // A first batch ingested an hour before the rest (the later search calls and the edge key),
    // with a call of a key the batch repeats but a day before the window (the index keeps it, the
    // window must not: at a TTL of 7 days it would be an entry); then a call of another key that
    // moves the indexer's watermark past the batch by more than its overlap.
    const later = (c: RawCall, i: number) => i >= 900 && (c.tool_id === 'search' || c.args.k === 'edge');
    const first = calls.filter((c, i) => !later(c, i));
    const before = rawCall({ tool_id: 'search', t: T0 - 86_400_000, args: { k: 0 } });
    expect(first.filter((c) => c.args_hash === before.args_hash && c.tool_id === 'search').length).toBeGreaterThan(1);
    await insertCalls(ch, db, [...first, before], T0 - 3_600_000);
    const marker = rawCall({ tool_id: 'search', t: T0 - 86_400_000, args: { k: 'marker' } });
    await insertCalls(ch, db, [marker], T0 - 3_000_000);

    // No index: every key is live (gathered from the calls), or the two-pass statements.
    await expectExact(rec.door, db, first);
    expect(rec.names).toContain('cache_simulation_indexed');
    rec.names.length = 0;
    await expectExact(rec.door, db, first, 0);
    expect(rec.names.filter((n) => n.startsWith('cache_')).every((n) => !n.endsWith('_indexed'))).toBe(true);

    // The indexer has seen the first batch: its repeated keys come grouped from cache_key_calls.
    await refreshDedupIndex(door);
    const keyCounts = new Map<string, number>();
    for (const c of [...first, before]) keyCounts.set(`${c.tool_id}/${c.args_hash}`, (keyCounts.get(`${c.tool_id}/${c.args_hash}`) ?? 0) + 1);
    const indexed = await rows<{ keys: string; calls: string }>(ch, 'SELECT uniqExact(tool_id, args_key) AS keys, length(arrayDistinct(groupArrayMerge(calls))) AS calls FROM {db:Identifier}.cache_key_calls', { db });
    const repeated = [...keyCounts.values()].filter((n) => n > 1);
    expect([Number(indexed[0]?.keys), Number(indexed[0]?.calls)]).toEqual([repeated.length, repeated.reduce((a, b) => a + b, 0)]);
    const live = await rows<{ n: string }>(ch, `SELECT count() AS n FROM {db:Identifier}.tool_invocations WHERE ingested_at > {t:DateTime64(3, 'UTC')}`, { db, t: new Date(T0 - 3_060_000).toISOString().replace('Z', '') });
    expect(Number(live[0]?.n)).toBe(1); // only the marker is live
    // Some calls copied twice, as two indexers running at once may.
    await ch.command({
      query: `INSERT INTO {db:Identifier}.dedup_repeats (args_key, tool_id, args_hash, call_id, created_at, duration_ms, cost_usd, succeeded)
              SELECT args_key, tool_id, args_hash, call_id, created_at, duration_ms, cost_usd, succeeded FROM {db:Identifier}.dedup_repeats LIMIT 200`,
      query_params: { db },
    });
    rec.names.length = 0;
    await expectExact(rec.door, db, first);
    expect(rec.names).toContain('cache_simulation_indexed');

    // The rest arrives after the watermark: the keys it has are live, the others indexed.
    rec.names.length = 0;
    await insertCalls(ch, db, calls.filter(later));
    await expectExact(rec.door, db, calls);
    expect(rec.names).toContain('cache_simulation_indexed');
    // And once the indexer has caught up again.
    await refreshDedupIndex(door);
    await expectExact(door, db, calls);

    // A window of whole days, whole hours and edges: every stored call counted once.
    const wide = { fromMs: T0 - 37 * 3_600_000 + 600_000, toMs: T0 + 26 * 3_600_000 + 1_800_000 };
    const perTool = new Map<string, number>();
    for (const c of [...calls, before, marker]) perTool.set(c.tool_id, (perTool.get(c.tool_id) ?? 0) + 1);
    const w = await cacheSimulation(door, db, { window: wide }, DEFAULT_QUERY_CONTEXT);
    expect(new Map(w.tools.map((t) => [t.tool_id, t.calls]))).toEqual(perTool);
  });

  it('sums the replays the dedup indexer kept, and replays on the read a key whose calls, TTL or window they no longer match', async () => {
    const { ch, db, door } = await freshDatabase('cs');
    await aggregatesFromEpoch(ch, db);
    const calls = workload(33);
    await applyManifest(door, M, T0);
    await insertCalls(ch, db, calls, T0 - 3_600_000);
    const of = (tool: string) => calls.filter((c) => c.tool_id === tool);
    const repeatedKeys = (tool: string) => {
      const keys = new Map<string, number>();
      for (const c of of(tool)) keys.set(c.args_hash, (keys.get(c.args_hash) ?? 0) + 1);
      return [...keys.values()].filter((n) => n > 1).length;
    };
    // An overlap of 0: a replay is true from the moment it is made.
    const run = await refreshDedupIndex(door, 0);
    expect(run.replayed).toBe(repeatedKeys('search') + repeatedKeys('fetch')); // lookup: TTL 0, email_send: not idempotent
    const kept = await rows<{ tool_id: string; keys: number; hits: number; ttl: number }>(
      ch,
      'SELECT tool_id, count() AS keys, sum(hits) AS hits, any(ttl_ms) AS ttl FROM {db:Identifier}.cache_key_replays FINAL GROUP BY tool_id ORDER BY tool_id',
      { db },
    );
    const keptOf = (tool: string, ttl: number) => ({ tool_id: tool, keys: repeatedKeys(tool), hits: bruteForce(of(tool), ttl).hits, ttl });
    expect(kept).toEqual([keptOf('fetch', 60_000), keptOf('search', 300_000)]);
    await expectExact(door, db, calls, undefined, 0);
    expect((await refreshDedupIndex(door, 0)).replayed).toBe(0);

    // The read sums a kept replay while it is true: one made up for a search key is taken...
    const window = { fromMs: T0, toMs: T0 + 86_400_000 };
    const searchHits = async (indexOverlapMs: number) =>
      (await cacheSimulation(door, db, { window, indexOverlapMs }, DEFAULT_QUERY_CONTEXT)).tools.find((t) => t.tool_id === 'search')?.hits;
    const [key] = await rows<{ hits: number }>(ch, "SELECT hits FROM {db:Identifier}.cache_key_replays FINAL WHERE tool_id = 'search' ORDER BY hits DESC LIMIT 1", { db });
    await ch.command({
      query: `INSERT INTO {db:Identifier}.cache_key_replays
              SELECT tool_id, args_key, ttl_ms, first_at, last_at, 1000000, saved_ms, saved_usd, now64(3, 'UTC')
              FROM {db:Identifier}.cache_key_replays FINAL WHERE tool_id = 'search' ORDER BY hits DESC LIMIT 1`,
      query_params: { db },
    });
    expect(await searchHits(0)).toBe(bruteForce(of('search'), 300_000).hits - Number(key?.hits) + 1_000_000);
    // ...but not when a copy of the key's calls may have committed after it (here: an overlap of 3 h).
    expect(await searchHits(3 * 3_600_000)).toBe(bruteForce(of('search'), 300_000).hits);

    // A new manifest TTL: the kept replays are at the old one, so the read replays every key until the next run.
    await applyManifest(door, { ...M, ...manifest({ search: { idempotent: true, cache_ttl_ms: 120_000 } }) }, T0 + 1);
    expect(await searchHits(0)).toBe(bruteForce(of('search'), 120_000).hits);
    expect((await refreshDedupIndex(door, 0)).replayed).toBe(repeatedKeys('search'));
    expect(await searchHits(0)).toBe(bruteForce(of('search'), 120_000).hits);
    const [ttl] = await rows<{ t: number[] }>(ch, "SELECT groupUniqArray(ttl_ms) AS t FROM {db:Identifier}.cache_key_replays FINAL WHERE tool_id = 'search'", { db });
    expect(ttl?.t).toEqual([120_000]);
    // Keys without a hit keep no span (none in any window either); those with hits keep their calls' span.
    const [spans] = await rows<{ zero: number; zero_spanless: number; spanned: number; hit: number }>(
      ch,
      'SELECT countIf(hits = 0) AS zero, countIf(hits = 0 AND first_at = 0 AND last_at = 0) AS zero_spanless, countIf(hits > 0 AND first_at > 0 AND last_at >= first_at) AS spanned, countIf(hits > 0) AS hit FROM {db:Identifier}.cache_key_replays FINAL',
      { db },
    );
    expect(spans?.zero).toBeGreaterThan(0);
    expect([spans?.zero_spanless, spans?.spanned]).toEqual([spans?.zero, spans?.hit]);

    // An args_key naming two keys (two check_keys) is never replayed: both are replayed on the read.
    await ch.command({
      query: `INSERT INTO {db:Identifier}.cache_key_calls (tool_id, args_key, check_key, month, last_at, copied_at, calls)
              SELECT 'search', 42, number, toDate('2026-10-01'), now64(3), now64(3),
                groupArrayState((toInt64(${T0} + number), UUIDToNum(generateUUIDv4()), toUInt8(1), toUInt64(1), toFloat64(0)))
              FROM numbers(2) GROUP BY number`,
      query_params: { db },
    });
    await refreshDedupIndex(door, 0);
    expect(await rows(ch, 'SELECT args_key FROM {db:Identifier}.cache_key_replays WHERE args_key = 42', { db })).toEqual([]);
  });

  it('caches nothing without a manifest, and answers an empty list and curve for a tool without calls', async () => {
    const { ch, db, door } = await freshDatabase('cs');
    await aggregatesFromEpoch(ch, db);
    await insertCalls(ch, db, [rawCall({ tool_id: 'search', t: T0 }), rawCall({ tool_id: 'search', t: T0 + 1 })], T0);
    const window = { fromMs: T0, toMs: T0 + 86_400_000 };
    const sim = await cacheSimulation(door, db, { window, ttlMs: 60_000 }, DEFAULT_QUERY_CONTEXT);
    expect(sim.tools).toEqual([{ tool_id: 'search', ttl_ms: 60_000, cacheable: false, calls: 2, hits: 0, hit_rate: 0, saved_ms: 0, saved_usd: 0 }]);
    const none = await cacheSimulation(door, db, { window, toolId: 'nothing' }, DEFAULT_QUERY_CONTEXT);
    expect(none).toEqual({ tools: [], totals: { calls: 0, hits: 0, hit_rate: 0, saved_ms: 0, saved_usd: 0 } });
    expect(await ttlCurve(door, db, { toolId: 'nothing', window }, DEFAULT_QUERY_CONTEXT)).toEqual({ tool_id: 'nothing', cacheable: false, calls: 0, points: [], suggested_ttl_ms: null });
  });
});
