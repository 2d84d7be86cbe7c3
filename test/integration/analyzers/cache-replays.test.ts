/**
 * The cache replays' check from run to run (a cursor): after the first sweep a run looks only at
 * the keys copied since the last check, replays exactly the keys whose calls changed, sweeps every
 * key again after a manifest change or once a sweep is due, and each kept replay equals the
 * brute-force replay of its key's calls.
 */
import { describe, expect, it } from 'vitest';
import { FULL_SWEEP_MS, type ReplayCursor } from '../../../analyzers/cache-replays.ts';
import { refreshDedupIndex } from '../../../analyzers/dedup-index.ts';
import { applyManifest } from '../../../analyzers/manifest-store.ts';
import { DEDUP_PART_CALLS } from '../../../analyzers/dedup-index.ts';
import { parseManifest, type Manifest } from '../../../schemas/tool-manifest.ts';
import { bruteForce } from '../../helpers/cache-oracle.ts';
import { aggregatesFromEpoch, freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { cacheSimulation } from '../../../queries/cache-simulation.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { insertCalls, rawCall, rng, type RawCall } from '../../helpers/raw-calls.ts';

const T0 = Date.UTC(2026, 9, 1, 10);

function manifest(ttl: { search: number; fetch: number }): Manifest {
  const r = parseManifest({
    search: { tool_id: 'search', idempotent: true, cache_ttl_ms: ttl.search },
    fetch: { tool_id: 'fetch', idempotent: true, cache_ttl_ms: ttl.fetch },
    send: { tool_id: 'send', idempotent: false, cache_ttl_ms: 60_000 },
  });
  if (!r.ok) throw new Error(r.errors.join('; '));
  return r.manifest;
}

/** 400 calls over 8 keys a tool, on a coarse clock (ties, expiries), a quarter failed. */
function workload(seed: number): RawCall[] {
  const r = rng(seed);
  return Array.from({ length: 400 }, () =>
    rawCall({
      tool_id: (['search', 'fetch', 'send'] as const)[Math.floor(r() * 3)] as string,
      t: T0 + Math.floor(r() * 300) * 20_000,
      args: { k: Math.floor(r() * 8) },
      status: r() < 0.25 ? 'error' : 'success',
      duration_ms: Math.floor(r() * 1000),
    }),
  );
}

const keyOf = (c: RawCall) => `${c.tool_id}/${c.args_hash}`;

/** The keys of the cacheable tools with more than one call: what the indexer copies and replays. */
function repeatedKeys(calls: readonly RawCall[]): Map<string, RawCall[]> {
  const byKey = new Map<string, RawCall[]>();
  for (const c of calls) if (c.tool_id !== 'send') byKey.set(keyOf(c), [...(byKey.get(keyOf(c)) ?? []), c]);
  return new Map([...byKey].filter(([, cs]) => cs.length > 1));
}

describe('cache replays', () => {
  it('checks only the keys copied since the last check, sweeps every key after a manifest change or when due, and keeps exact replays', async () => {
    const { ch, db, door } = await freshDatabase('cr');
    await aggregatesFromEpoch(ch, db);
    const lone = rawCall({ tool_id: 'search', t: T0 + 7, args: { k: 'lone' } });
    const calls = [...workload(7), lone];
    await applyManifest(door, manifest({ search: 300_000, fetch: 60_000 }), T0);
    await insertCalls(ch, db, calls, T0 - 3_600_000);
    const cursor: ReplayCursor = {};
    // An overlap of 0: a replay is true from the moment it is made.
    const run = (c: ReplayCursor | undefined = cursor) => refreshDedupIndex(door, 0, DEDUP_PART_CALLS, c);
    const kept = async () =>
      rows<{ tool_id: string; hits: number; saved_ms: number; ttl_ms: number; n: number }>(
        ch,
        'SELECT tool_id, sum(hits) AS hits, sum(saved_ms) AS saved_ms, any(ttl_ms) AS ttl_ms, count() AS n FROM {db:Identifier}.cache_key_replays FINAL GROUP BY tool_id ORDER BY tool_id',
        { db },
      );
    /** The kept replays per tool as the brute force over each repeated key at `ttl`. */
    const want = (all: readonly RawCall[], ttl: { search: number; fetch: number }) =>
      (['fetch', 'search'] as const).map((tool) => {
        const keys = [...repeatedKeys(all).values()].filter((cs) => cs[0]?.tool_id === tool);
        const each = keys.map((cs) => bruteForce(cs, ttl[tool]));
        return { tool_id: tool, hits: each.reduce((s, x) => s + x.hits, 0), saved_ms: each.reduce((s, x) => s + x.saved_ms, 0), ttl_ms: ttl[tool], n: keys.length };
      });

    // The first run sweeps every key.
    const first = repeatedKeys(calls);
    expect(first.size).toBeGreaterThan(10);
    expect((await run()).replayed).toBe(first.size);
    expect(await kept()).toEqual(want(calls, { search: 300_000, fetch: 60_000 }));
    expect((await run()).replayed).toBe(0);

    // Replays lost (a table emptied): a run from the cursor does not look back at keys copied before its last check...
    await ch.command({ query: 'TRUNCATE TABLE {db:Identifier}.cache_key_replays', query_params: { db } });
    expect((await run()).replayed).toBe(0);
    // ...a sweep does, once due.
    cursor.sweptAtMs = (cursor.sweptAtMs ?? 0) - FULL_SWEEP_MS;
    expect((await run()).replayed).toBe(first.size);
    expect(await kept()).toEqual(want(calls, { search: 300_000, fetch: 60_000 }));

    // New calls: one more of a repeated key, a second of a key seen once, a first of a new key.
    const repeated = [...first.values()][0]?.[0];
    if (!repeated || first.has(keyOf(lone))) throw new Error('the workload has no repeated key, or lone repeats');
    const more = [
      rawCall({ tool_id: repeated.tool_id, t: repeated.t + 1, args: repeated.args }),
      rawCall({ tool_id: 'search', t: lone.t + 2, args: lone.args }),
      rawCall({ tool_id: 'search', t: T0 + 5, args: { k: 'new' } }),
    ];
    await insertCalls(ch, db, more);
    const all = [...calls, ...more];
    // Exactly the two keys whose calls changed, and every kept replay still the brute force's.
    expect((await run()).replayed).toBe(2);
    expect(await kept()).toEqual(want(all, { search: 300_000, fetch: 60_000 }));
    expect((await run()).replayed).toBe(0);

    // A new manifest TTL for search: every search key again (fetch's replays are still true).
    await applyManifest(door, manifest({ search: 120_000, fetch: 60_000 }), T0 + 1);
    const searchKeys = [...repeatedKeys(all).values()].filter((cs) => cs[0]?.tool_id === 'search').length;
    expect((await run()).replayed).toBe(searchKeys);
    expect(await kept()).toEqual(want(all, { search: 120_000, fetch: 60_000 }));
    expect((await run()).replayed).toBe(0);
    // Without a cursor every key is looked at, and none is due.
    expect((await run(undefined)).replayed).toBe(0);

    // A replayed args_key that comes to name a second key (another check_key: two calls, one hit
    // of 7 ms): its replay becomes a tombstone, and the read replays both keys.
    const window = { fromMs: T0, toMs: T0 + 86_400_000 };
    const search = async () => (await cacheSimulation(door, db, { window, indexOverlapMs: 0 }, DEFAULT_QUERY_CONTEXT)).tools.find((t) => t.tool_id === 'search');
    const real = bruteForce(all.filter((c) => c.tool_id === 'search'), 120_000);
    expect(await search()).toMatchObject({ hits: real.hits, saved_ms: real.saved_ms });
    // A window that starts after some keys' first calls: those keys are replayed on the read, from the calls in it.
    const late = { fromMs: T0 + 1_800_000, toMs: T0 + 86_400_000 };
    const lateSearch = (await cacheSimulation(door, db, { window: late, indexOverlapMs: 0 }, DEFAULT_QUERY_CONTEXT)).tools.find((t) => t.tool_id === 'search');
    expect(lateSearch?.hits).toBe(bruteForce(all.filter((c) => c.tool_id === 'search' && c.t >= late.fromMs), 120_000).hits);
    const [shared] = await rows<{ args_key: string }>(ch, "SELECT toString(args_key) AS args_key FROM {db:Identifier}.cache_key_replays FINAL WHERE tool_id = 'search' AND hits > 0 LIMIT 1", { db });
    await ch.command({
      query: `INSERT INTO {db:Identifier}.cache_key_calls (tool_id, args_key, check_key, month, last_at, copied_at, calls)
              SELECT 'search', toUInt64({k:String}), 7, toDate('2026-10-01'), now64(3), now64(3),
                groupArrayState((toInt64(${T0} + 60000 + number), UUIDToNum(generateUUIDv4()), toUInt8(1), toUInt64(7), toFloat64(0)))
              FROM numbers(2)`,
      query_params: { db, k: shared?.args_key ?? '' },
    });
    expect((await run()).replayed).toBe(1);
    expect(await rows(ch, 'SELECT ttl_ms FROM {db:Identifier}.cache_key_replays FINAL WHERE args_key = toUInt64({k:String})', { db, k: shared?.args_key ?? '' })).toEqual([{ ttl_ms: -1 }]);
    expect((await run()).replayed).toBe(0);
    expect(await search()).toMatchObject({ hits: real.hits + 1, saved_ms: real.saved_ms + 7 });
  });
});
