/**
 * Cache simulation and TTL curve against a brute-force replay written here: every call checked
 * against every earlier entry of its key, in (created_at, call_id) order. The workload has
 * created_at ties, failures, calls exactly at an entry's expiry, non-idempotent tools, a TTL of 0,
 * a tool no manifest declares, and costs with nulls.
 */
import { describe, expect, it } from 'vitest';
import { applyManifest } from '../../../analyzers/manifest-store.ts';
import { cacheSimulation, CURVE_TTLS_MS, ttlCurve } from '../../../queries/cache-simulation.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { parseManifest, type Manifest } from '../../../schemas/tool-manifest.ts';
import { freshDatabase } from '../../helpers/clickhouse.ts';
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

/** The obvious replay: entries as a list, a hit when some entry of the key is live. */
function bruteForce(calls: RawCall[], ttl: number): { calls: number; hits: number; saved_ms: number; saved_usd: number } {
  const ordered = [...calls].sort((a, b) => a.t - b.t || (a.call_id < b.call_id ? -1 : 1));
  const entries: Array<{ key: string; from: number }> = [];
  let hits = 0;
  let savedMs = 0;
  let savedUsd = 0;
  for (const c of ordered) {
    const key = `${c.tool_id}/${c.args_hash}`;
    const live = entries.some((e) => e.key === key && e.from <= c.t && c.t < e.from + ttl);
    if (live) {
      hits++;
      savedMs += c.duration_ms;
      savedUsd += c.cost_usd ?? 0;
    } else if (c.status === 'success') entries.push({ key, from: c.t });
  }
  return { calls: calls.length, hits, saved_ms: savedMs, saved_usd: savedUsd };
}

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

describe('cache simulation', () => {
  it('matches a brute-force replay per tool, at the manifest TTL and at a given TTL, and its TTL curve', async () => {
    const { ch, db, door } = await freshDatabase('cs');
    const calls = workload(21);
    await insertCalls(ch, db, calls, T0);
    await applyManifest(door, M, T0);
    const window = { fromMs: T0, toMs: T0 + 86_400_000 };
    const of = (tool: string) => calls.filter((c) => c.tool_id === tool);
    const close = (a: number, b: number) => expect(a).toBeCloseTo(b, 6);

    const sim = await cacheSimulation(door, db, { window }, DEFAULT_QUERY_CONTEXT);
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

    // A given TTL overrides the manifest's, also where the manifest has 0; never for a non-idempotent tool.
    const given = await cacheSimulation(door, db, { window, ttlMs: 120_000 }, DEFAULT_QUERY_CONTEXT);
    for (const tool of ['search', 'fetch', 'lookup']) {
      const want = bruteForce(of(tool), 120_000);
      expect(given.tools.find((t) => t.tool_id === tool)).toMatchObject({ cacheable: true, ttl_ms: 120_000, hits: want.hits, saved_ms: want.saved_ms });
    }
    expect(given.tools.find((t) => t.tool_id === 'email_send')).toMatchObject({ cacheable: false, hits: 0 });

    // The edge key: entries at T (first call; the tie at T is a hit), expiry exactly at T + 60 s.
    const edge = calls.filter((c) => c.args.k === 'edge');
    expect(bruteForce(edge, 60_000).hits).toBe(3);

    // TTL curve of one tool and its suggested TTL.
    const curve = await ttlCurve(door, db, { toolId: 'search', window }, DEFAULT_QUERY_CONTEXT);
    const points = CURVE_TTLS_MS.map((ttl) => ({ ttl, ...bruteForce(of('search'), ttl) }));
    expect(curve.points.map((p) => [p.ttl_ms, p.hits, p.saved_ms])).toEqual(points.map((p) => [p.ttl, p.hits, p.saved_ms]));
    points.forEach((p, i) => close(curve.points[i]?.saved_usd ?? -1, p.saved_usd));
    const week = points[points.length - 1] as (typeof points)[number];
    const suggested = points.find((p) => p.saved_ms >= 0.9 * week.saved_ms && p.saved_usd >= 0.9 * week.saved_usd - 1e-9)?.ttl;
    expect(curve.suggested_ttl_ms).toBe(suggested);
    expect(curve.cacheable).toBe(true);
    expect(curve.calls).toBe(of('search').length);

    // Without a tool: the idempotent tools together (search, fetch, lookup; not email_send).
    const together = await ttlCurve(door, db, { window }, DEFAULT_QUERY_CONTEXT);
    const idem = [...of('search'), ...of('fetch'), ...of('lookup')];
    expect(together.calls).toBe(idem.length);
    expect(together.points.map((p) => p.hits)).toEqual(CURVE_TTLS_MS.map((ttl) => bruteForce(idem, ttl).hits));

    const notCacheable = await ttlCurve(door, db, { toolId: 'email_send', window }, DEFAULT_QUERY_CONTEXT);
    expect(notCacheable).toMatchObject({ cacheable: false, calls: of('email_send').length, suggested_ttl_ms: null });
    expect(notCacheable.points.every((p) => p.hits === 0)).toBe(true);
  });

  it('caches nothing without a manifest, and answers an empty list and curve for a tool without calls', async () => {
    const { ch, db, door } = await freshDatabase('cs');
    await insertCalls(ch, db, [rawCall({ tool_id: 'search', t: T0 }), rawCall({ tool_id: 'search', t: T0 + 1 })], T0);
    const window = { fromMs: T0, toMs: T0 + 86_400_000 };
    const sim = await cacheSimulation(door, db, { window, ttlMs: 60_000 }, DEFAULT_QUERY_CONTEXT);
    expect(sim.tools).toEqual([{ tool_id: 'search', ttl_ms: 60_000, cacheable: false, calls: 2, hits: 0, hit_rate: 0, saved_ms: 0, saved_usd: 0 }]);
    const none = await cacheSimulation(door, db, { window, toolId: 'nothing' }, DEFAULT_QUERY_CONTEXT);
    expect(none).toEqual({ tools: [], totals: { calls: 0, hits: 0, hit_rate: 0, saved_ms: 0, saved_usd: 0 } });
    expect(await ttlCurve(door, db, { toolId: 'nothing', window }, DEFAULT_QUERY_CONTEXT)).toEqual({ tool_id: 'nothing', cacheable: false, calls: 0, points: [], suggested_ttl_ms: null });
  });
});
