/**
 * The hints job over a workload built so that exactly three hints must come out — one per kind —
 * beside near-misses of every rule (a tool whose cache saves too little, calls outside the
 * window, sequences too rare, without data flow or with too long a gap, a retry count at the
 * threshold). The expected hints and their figures are worked out by hand below, not by the
 * code under test; re-runs over the same window add nothing.
 */
import { describe, expect, it } from 'vitest';
import { createHintsJob } from '../../../analyzers/hints-runner.ts';
import type { HintThresholds, HintWindow } from '../../../analyzers/hint-rules.ts';
import { applyManifest } from '../../../analyzers/manifest-store.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { measureHints } from '../../../queries/hint-candidates.ts';
import { hintsList } from '../../../queries/hints.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { parseManifest } from '../../../schemas/tool-manifest.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import type { ClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { count, freshDatabase } from '../../helpers/clickhouse.ts';
import { insertCalls, rawCall, type RawCall } from '../../helpers/raw-calls.ts';

const HOUR = 3_600_000;
/**
 * The job runs at half past an hour a day ago (hints are kept 30 days: older rows would expire);
 * its window is the 24 h ending at the full hour before (aligned to the 1 h interval).
 */
const NOW = Math.floor(Date.now() / HOUR) * HOUR - 24 * HOUR + 30 * 60_000;
const WINDOW = { fromMs: NOW - 30 * 60_000 - 24 * HOUR, toMs: NOW - 30 * 60_000 };
const T = WINDOW.fromMs + 2 * HOUR;
const THRESHOLDS: HintThresholds = { cacheMinShare: 0.2, bundleMinCount: 5, bundleMaxGapMs: 10_000, retryThreshold: 3 };

let seq = 0;
/** A call with arguments of its own (no accidental cache hits between unrelated calls). */
const call = (p: Partial<RawCall> & Pick<RawCall, 'tool_id' | 't'>) => rawCall({ args: { n: seq++ }, ...p });

interface Workload {
  calls: RawCall[];
  edges: Array<{ task: string; p: RawCall; s: RawCall; flow: string | null }>;
}

/** search: 20 calls of one key 30 s apart (cache); fetch: 1 repeat in 20 (too little); search_old: before the window. */
function cacheCalls(w: Workload): void {
  for (let i = 0; i < 20; i++) w.calls.push(call({ tool_id: 'search', t: T + i * 30_000, args: { q: 'same' }, task_id: `c${i % 2}` }));
  for (let i = 0; i < 18; i++) w.calls.push(call({ tool_id: 'fetch', t: T + i * 30_000 }));
  w.calls.push(call({ tool_id: 'fetch', t: T + 18 * 30_000, args: { n: 'fetch-0' } }), call({ tool_id: 'fetch', t: T + 18 * 30_000 + 10_000, args: { n: 'fetch-0' } }));
  for (let i = 0; i < 20; i++) w.calls.push(call({ tool_id: 'search_old', t: WINDOW.fromMs - HOUR + i * 30_000, args: { q: 'same' } }));
}

/** A chain of tools in one task: each step starts `delta` ms after the previous one started. */
function chain(w: Workload, task: string, t: number, steps: Array<{ tool: string; duration: number; delta: number }>, flow: string | null): void {
  let at = t;
  let prev: RawCall | undefined;
  for (const s of steps) {
    at += s.delta;
    const c = call({ tool_id: s.tool, t: at, duration_ms: s.duration, task_id: task });
    w.calls.push(c);
    if (prev) w.edges.push({ task, p: prev, s: c, flow });
    prev = c;
  }
}

function bundleCalls(w: Workload): void {
  // 6 runs of plan → search_docs → summarize, each step 500 ms after the previous ended.
  for (let i = 0; i < 6; i++) {
    chain(w, `b${i}`, T + i * 60_000, [{ tool: 'plan', duration: 1000, delta: 0 }, { tool: 'search_docs', duration: 500, delta: 1500 }, { tool: 'summarize', duration: 300, delta: 1000 }], 'output fed args');
  }
  for (let i = 0; i < 4; i++) chain(w, `l${i}`, T + i * 60_000, [{ tool: 'lint', duration: 100, delta: 0 }, { tool: 'format', duration: 100, delta: 200 }], 'fix list'); // too rare
  for (let i = 0; i < 6; i++) chain(w, `d${i}`, T + i * 60_000, [{ tool: 'draft', duration: 100, delta: 0 }, { tool: 'review', duration: 100, delta: 200 }], null); // no data flow
  for (let i = 0; i < 6; i++) chain(w, `k${i}`, T + i * 60_000, [{ tool: 'compile', duration: 1000, delta: 0 }, { tool: 'run_tests', duration: 100, delta: 21_000 }], 'binary'); // gap 20 s
}

function retryCalls(w: Workload): void {
  const fail = (task: string, tool: string, t: number, error: string) => call({ tool_id: tool, t, task_id: task, status: 'error', error, duration_ms: 200, cost_usd: 0.01 });
  // deploy in r1: 5 failures then a success (5 retried); in r2: 4 failures then a success (4 retried).
  ['HTTP 503', 'connection reset', 'HTTP 503', 'connection reset', 'HTTP 503'].forEach((e, i) => w.calls.push(fail('r1', 'deploy', T + i * 1000, e)));
  w.calls.push(call({ tool_id: 'deploy', t: T + 5000, task_id: 'r1' }));
  for (let i = 0; i < 4; i++) w.calls.push(fail('r2', 'deploy', T + i * 1000, 'HTTP 503'));
  w.calls.push(call({ tool_id: 'deploy', t: T + 4000, task_id: 'r2' }));
  // query_db in r3: 4 failures, the last one not retried: 3 retried, not more than the threshold.
  for (let i = 0; i < 4; i++) w.calls.push(fail('r3', 'query_db', T + i * 1000, 'deadlock'));
}

async function load(ch: ClickHouseClient, db: string): Promise<void> {
  const w: Workload = { calls: [], edges: [] };
  cacheCalls(w);
  bundleCalls(w);
  retryCalls(w);
  await insertCalls(ch, db, w.calls, NOW);
  await ch.insert({
    table: `${db}.tool_workflows`,
    format: 'JSONEachRow',
    values: w.edges.map((e) => ({
      task_id: e.task,
      preceding_call_id: e.p.call_id,
      succeeding_call_id: e.s.call_id,
      preceding_tool_id: e.p.tool_id,
      succeeding_tool_id: e.s.tool_id,
      time_delta_ms: e.s.t - e.p.t,
      data_flow: e.flow,
      origin: 'emitted',
      fingerprint: 'f'.repeat(32),
      source: 'test',
    })),
  });
}

function job(door: ClickHouseDoor, now: number) {
  return createHintsJob({
    clickhouse: door,
    measure: (ch: ClickHouseDoor, w: HintWindow) => measureHints(ch, ch.database, w, THRESHOLDS, DEFAULT_QUERY_CONTEXT),
    thresholds: THRESHOLDS,
    intervalMs: HOUR,
    windowMs: 24 * HOUR,
    metrics: new MetricsRegistry(),
    logger: silentLogger(),
    now: () => now,
  });
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('hints job', () => {
  it('finds exactly the planted candidates, with their evidence, and re-runs add nothing', async () => {
    const { ch, db, door } = await freshDatabase('hints');
    await load(ch, db);
    const first = await job(door, NOW).runOnce();
    expect(first).toEqual({ window: WINDOW, hints: 3, inserted: 3 });

    const all = await hintsList(door, db, { window: { fromMs: 0, toMs: NOW + HOUR }, limit: 100 }, DEFAULT_QUERY_CONTEXT);
    const byKind = Object.fromEntries(all.hints.map((h) => [h.kind, h]));
    expect(all.hints.map((h) => `${h.kind}:${h.tool_ids.join('>')}`).sort()).toEqual(['bundle_candidate:plan>search_docs>summarize', 'cache_candidate:search', 'retry_storm:deploy']);
    for (const h of all.hints) expect(h).toMatchObject({ window_from: iso(WINDOW.fromMs), window_to: iso(WINDOW.toMs), created_at: iso(NOW), origin: 'analyzer' });

    // 20 calls 30 s apart of one key: at 5 min an entry serves the next 9 calls, twice (18 hits);
    // at 15 min and longer 19; 18 ≥ 90 % of 19, at 1 min only 10. 18 × 100 ms of 2000 ms.
    expect(byKind.cache_candidate).toMatchObject({
      evidence: { ttl_ms: 300_000, calls: 20, hits: 18, saved_ms: 1800, saved_usd: 0, share_ms: 0.9, share_usd: 0 },
      estimated_savings_ms: 1800,
      estimated_savings_usd: 0,
      task_ids_sample: ['c0', 'c1'],
    });
    // 6 runs; each step starts 500 ms after the previous one ended: 1000 ms per run.
    expect(byKind.bundle_candidate).toMatchObject({
      evidence: { count: 6, median_gap_ms: 500, saved_ms_per_run: 1000, max_gap_ms: 10_000 },
      estimated_savings_ms: 6000,
      task_ids_sample: ['b0', 'b1', 'b2', 'b3', 'b4', 'b5'],
    });
    // r1: 5 retried failures, r2: 4 (both > 3); r3's query_db: 3. 9 × 200 ms, 9 × $0.01.
    expect(byKind.retry_storm).toMatchObject({
      evidence: { tasks: 2, retried_failures: 9, max_in_task: 5, threshold: 3, errors: { 'HTTP 503': 7, 'connection reset': 2 } },
      estimated_savings_ms: 1800,
      task_ids_sample: ['r1', 'r2'],
    });
    expect(byKind.retry_storm?.estimated_savings_usd).toBeCloseTo(0.09, 9);

    // Same interval, a later clock, a new job (a restart): the same window, the same ids.
    expect(await job(door, NOW + 20 * 60_000).runOnce()).toEqual({ window: WINDOW, hints: 3, inserted: 0 });
    expect(await job(door, NOW).runOnce()).toMatchObject({ inserted: 0 });
    expect(await count(ch, db, 'workflow_optimizations')).toBe(3);
    // The next interval is another, overlapping window: the same findings keep their ids, each
    // with a newer row (that window's evidence); the list shows each hint once, its newest row.
    const next = await job(door, NOW + HOUR).runOnce();
    expect(next).toMatchObject({ window: { fromMs: WINDOW.fromMs + HOUR, toMs: WINDOW.toMs + HOUR }, inserted: 3 });
    expect(await count(ch, db, 'workflow_optimizations')).toBe(6);
    const again = await hintsList(door, db, { window: { fromMs: 0, toMs: NOW + 2 * HOUR }, limit: 100 }, DEFAULT_QUERY_CONTEXT);
    expect(again.hints.map((h) => h.hint_id).sort()).toEqual(all.hints.map((h) => h.hint_id).sort());
    for (const h of again.hints) expect(h).toMatchObject({ window_to: iso(WINDOW.toMs + HOUR), created_at: iso(NOW + HOUR) });
    // Paged one by one, no hint comes back on a later page with an older row.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await hintsList(door, db, { window: { fromMs: 0, toMs: NOW + 2 * HOUR }, limit: 1, ...(cursor ? { cursor } : {}) }, DEFAULT_QUERY_CONTEXT);
      seen.push(...page.hints.map((h) => h.hint_id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen.sort()).toEqual(all.hints.map((h) => h.hint_id).sort());
    // An older run arriving late (a process with a slow clock) adds nothing: a newer window is stored.
    expect(await job(door, NOW).runOnce()).toMatchObject({ inserted: 0 });
  });

  it('with a manifest loaded, suggests caching only the tools it declares idempotent', async () => {
    const { ch, db, door } = await freshDatabase('hintsm');
    await load(ch, db);
    const m = parseManifest({ search: { tool_id: 'search', idempotent: false, cache_ttl_ms: 60_000 }, fetch: { tool_id: 'fetch', idempotent: true, cache_ttl_ms: 60_000 } });
    if (!m.ok) throw new Error(m.errors.join('; '));
    await applyManifest(door, m.manifest);
    await job(door, NOW).runOnce();
    const kinds = (await hintsList(door, db, { window: { fromMs: 0, toMs: NOW + HOUR }, limit: 100 }, DEFAULT_QUERY_CONTEXT)).hints.map((h) => `${h.kind}:${h.tool_ids.join('>')}`);
    expect(kinds.sort()).toEqual(['bundle_candidate:plan>search_docs>summarize', 'retry_storm:deploy']);
  });
});
