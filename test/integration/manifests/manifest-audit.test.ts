/**
 * M1–M7 on a generated workload, against an oracle computed here by brute force from the
 * generated calls and the manifest versions (never by the rules under test): calls in four
 * ingest slices with late arrivals, two manifest versions (the first reaching back), ties in
 * created_at, retry chains, rate-limit bursts and capability tags. Then: exactly once, and a
 * later version rewrites nothing already judged.
 */
import { describe, expect, it } from 'vitest';
import { createAuditor } from '../../../analyzers/auditor.ts';
import { DEPENDENCY_JOB } from '../../../analyzers/dependency-runner.ts';
import { applyManifest, loadManifestHistory } from '../../../analyzers/manifest-store.ts';
import { ManifestAuditor } from '../../../analyzers/manifest-audit.ts';
import { writeWatermark } from '../../../analyzers/store.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import type { Manifest } from '../../../schemas/tool-manifest.ts';
import { freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { insertCalls, rawCall, rng, type RawCall } from '../../helpers/raw-calls.ts';
import { manifestOf } from '../../helpers/manifests.ts';

const T0 = Date.UTC(2026, 9, 1, 10);
const MIN = 60_000;
const QUERY_SCHEMA = { type: 'object', required: ['q'], properties: { q: { type: 'string' } }, additionalProperties: false };

const manifest = manifestOf;

const V1 = manifest({
  search: { idempotent: true, input_schema: QUERY_SCHEMA, timeout_ms: 1000, rate_limit_rpm: 4, max_retries: 2, receives_untrusted_input: true },
  db_read: { idempotent: true, accesses_private_data: true, billable: true },
  email_send: { idempotent: false, communicates_externally: true, timeout_ms: 500 },
  fetch: { idempotent: true, receives_untrusted_input: true, communicates_externally: true, max_retries: 0, rate_limit_rpm: 6 },
});
const V2 = manifest({
  search: { idempotent: true, input_schema: QUERY_SCHEMA, timeout_ms: 2000, rate_limit_rpm: 2, max_retries: 1 },
  db_read: { idempotent: false, accesses_private_data: true },
  fetch: { idempotent: true, receives_untrusted_input: true, communicates_externally: true, max_retries: 0, rate_limit_rpm: 6 },
  chart: { idempotent: true, communicates_externally: true, billable: true },
});
const V1_AT = T0 + 5 * MIN;
const V2_AT = T0 + 15 * MIN;
const TOOLS = ['search', 'search', 'db_read', 'email_send', 'fetch', 'chart', 'mystery'];
const STATUSES = ['success', 'success', 'error', 'timeout', 'rate_limited', 'invalid_input'] as const;
/** Statuses of the calls of retry chains: mostly failures of every kind. */
const CHAIN_STATUSES = ['error', 'error', 'timeout', 'rate_limited', 'rate_limited', 'invalid_input', 'success'] as const;

/** The workload: random calls on a coarse clock (ties), plus retry chains. */
function workload(seed: number): RawCall[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const argsOf = (tool: string): Record<string, unknown> =>
    tool === 'search' ? pick([{ q: 'a' }, { q: 'b' }, { q: 5 }, {}, { q: 'a', extra: true }]) : { id: pick([1, 2, 3]) };
  const calls: RawCall[] = [];
  for (let i = 0; i < 500; i++) {
    const tool = pick(TOOLS);
    calls.push(
      rawCall({
        tool_id: tool,
        task_id: r() < 0.1 ? '' : `task-${Math.floor(r() * 40)}`,
        t: T0 + Math.floor(r() * 1800) * 1000 + (r() < 0.5 ? 0 : Math.floor(r() * 3) * 250),
        status: pick(STATUSES),
        duration_ms: Math.floor(r() * 3000),
        cost_usd: r() < 0.3 ? null : Math.round(r() * 100) / 100,
        args: argsOf(tool),
      }),
    );
  }
  for (let k = 0; k < 30; k++) {
    const tool = pick(['search', 'db_read', 'email_send', 'fetch']);
    const args = argsOf(tool);
    const task = `retry-${k % 12}`;
    let t = T0 + Math.floor(r() * 1700) * 1000;
    for (let j = 0, n = 2 + Math.floor(r() * 4); j < n; j++) {
      calls.push(rawCall({ tool_id: tool, task_id: task, t, args, status: pick(CHAIN_STATUSES), duration_ms: 50 }));
      t += pick([0, 1, 500, 20_000, 59_999, 60_000, 61_000]);
    }
  }
  return calls;
}

/** The version in force at t, found by a linear scan. */
function versionAt(versions: Array<{ at: number; m: Manifest }>, t: number): Manifest {
  let v = versions[0] as { at: number; m: Manifest };
  for (const x of versions) if (x.at <= t) v = x;
  return v.m;
}

/** Expected violations as `invariant:ids`, computed the slow, obvious way. */
function oracle(calls: RawCall[], versions: Array<{ at: number; m: Manifest }>): { keys: Set<string>; trifectaTasks: Set<string>; cases: string[] } {
  const keys = new Set<string>();
  /** Which retries the workload holds: the status retried after, the tool's idempotency, the verdict. */
  const cases = new Set<string>();
  const entry = (c: RawCall) => versionAt(versions, c.t)[c.tool_id];
  const before = (a: RawCall, b: RawCall) => a.t < b.t || (a.t === b.t && a.call_id < b.call_id);
  for (const c of calls) {
    const e = entry(c);
    if (!e) {
      keys.add(`M1:${c.call_id}`);
      continue;
    }
    if (e.input_schema) {
      const a = c.args;
      const ok = typeof a.q === 'string' && Object.keys(a).every((k) => k === 'q');
      if (!ok) keys.add(`M2:${c.call_id}`);
    }
    if (e.timeout_ms !== null && c.duration_ms > e.timeout_ms && c.status !== 'timeout') keys.add(`M3:${c.call_id}`);
    if (e.rate_limit_rpm !== null) {
      const n = calls.filter((x) => x.tool_id === c.tool_id && x.t > c.t - MIN && x.t <= c.t).length;
      if (n > e.rate_limit_rpm) keys.add(`M4:${c.call_id}`);
    }
    if (e.billable && c.cost_usd === null) keys.add(`M7:${c.call_id}`);
    if (c.task_id !== '') {
      const prevOf = (x: RawCall): RawCall | undefined => {
        const earlier = calls.filter((y) => y.task_id === x.task_id && y.tool_id === x.tool_id && y.args_hash === x.args_hash && before(y, x));
        return earlier.reduce<RawCall | undefined>((p, y) => (!p || before(p, y) ? y : p), undefined);
      };
      const retryNo = (x: RawCall): number => {
        const prev = prevOf(x);
        return prev && prev.status !== 'success' && x.t - prev.t > 0 && x.t - prev.t < MIN ? retryNo(prev) + 1 : 0;
      };
      const k = retryNo(c);
      // tool-smith's error contract: after rate_limit any tool may retry, after validation_error none
      // may repeat the args, after a timeout or another error only an idempotent one.
      const failed = prevOf(c)?.status;
      const breach = failed === 'invalid_input' || (failed !== 'rate_limited' && !e.idempotent) || (e.max_retries !== null && k > e.max_retries);
      if (k > 0 && breach) keys.add(`M5:${c.call_id}`);
      if (k > 0) cases.add(`retry-after:${failed}:${e.idempotent ? 'idempotent' : 'not-idempotent'}:${breach ? 'M5' : 'allowed'}`);
    }
  }
  const trifectaTasks = new Set<string>();
  const tasks = new Set(calls.map((c) => c.task_id).filter((t) => t !== ''));
  for (const task of tasks) {
    const tc = calls.filter((c) => c.task_id === task);
    const has = (c: RawCall, tag: 'receives_untrusted_input' | 'accesses_private_data' | 'communicates_externally') => entry(c)?.[tag] === true;
    if (tc.some((a) => has(a, 'receives_untrusted_input') && tc.some((b) => b.t >= a.t && has(b, 'accesses_private_data') && tc.some((c) => c.t >= b.t && has(c, 'communicates_externally'))))) {
      trifectaTasks.add(task);
    }
  }
  return { keys, trifectaTasks, cases: [...cases] };
}

describe('manifest audit (M1–M7)', () => {
  it('finds exactly what the brute-force oracle finds, slice by slice, once each', async () => {
    const { ch, db, door } = await freshDatabase('mf');
    const calls = workload(13);
    const versions = [
      { at: V1_AT, m: V1 },
      { at: V2_AT, m: V2 },
    ];
    await applyManifest(door, V1, V1_AT);
    await applyManifest(door, V2, V2_AT);
    // Four ingest slices; a quarter of each slice's calls are late (created long before).
    const r = rng(5);
    const slices: RawCall[][] = [[], [], [], []];
    for (const c of calls) slices[Math.floor(r() * 4)]?.push(c);
    const metrics = new MetricsRegistry();
    const I = [T0 + 40 * MIN, T0 + 41 * MIN, T0 + 42 * MIN, T0 + 43 * MIN];
    for (let k = 0; k < 4; k++) {
      await insertCalls(ch, db, slices[k] as RawCall[], I[k] as number);
      await writeWatermark(door, DEPENDENCY_JOB, I[k] as number);
      await createAuditor({ clickhouse: door, windowMs: MIN, graceMs: 0, metrics, logger: silentLogger(), now: () => I[k] as number }).runOnce();
    }
    const stored = await rows<{ invariant: string; ids: string[]; k: string; detail: string }>(
      ch,
      "SELECT invariant, ids, violation_key AS k, detail FROM {db:Identifier}.violations WHERE startsWith(invariant, 'M')",
      { db },
    );
    expect(new Set(stored.map((s) => s.k)).size).toBe(stored.length);
    const want = oracle(calls, versions);
    const got = new Set(stored.filter((s) => s.invariant !== 'M6').map((s) => `${s.invariant}:${s.ids.join(',')}`));
    expect([...got].sort()).toEqual([...want.keys].sort());
    for (const inv of ['M1', 'M2', 'M3', 'M4', 'M5', 'M7']) expect([...want.keys].some((k) => k.startsWith(inv)), `workload has ${inv}`).toBe(true);
    // The workload holds the cases of the retryability table that differ: a retry of a tool that is
    // not idempotent after rate_limited (allowed), and a repeat of an idempotent one after invalid_input (M5).
    expect(want.cases).toContain('retry-after:rate_limited:not-idempotent:allowed');
    expect(want.cases).toContain('retry-after:invalid_input:idempotent:M5');
    // M6: one per task, and its three calls really form the path.
    const m6 = stored.filter((s) => s.invariant === 'M6');
    expect(new Set(m6.map((s) => s.k.replace('M6/lethal_trifecta/task:', '')))).toEqual(want.trifectaTasks);
    expect(want.trifectaTasks.size).toBeGreaterThan(0);
    const byId = new Map(calls.map((c) => [c.call_id, c]));
    for (const v of m6) {
      const [a, b, c] = v.ids.map((id) => byId.get(id) as RawCall);
      expect(a && b && c && a.t <= b.t && b.t <= c.t).toBe(true);
      expect(versionAt(versions, (a as RawCall).t)[(a as RawCall).tool_id]?.receives_untrusted_input).toBe(true);
      expect(versionAt(versions, (b as RawCall).t)[(b as RawCall).tool_id]?.accesses_private_data).toBe(true);
      expect(versionAt(versions, (c as RawCall).t)[(c as RawCall).tool_id]?.communicates_externally).toBe(true);
    }

    // One pass over everything finds the same as the four slices did.
    const one = await new ManifestAuditor(door, MIN).audit(await loadManifestHistory(door, db), 0, I[3] as number);
    expect(new Set(one.found.map((v) => v.violation_key))).toEqual(new Set(stored.map((s) => s.k)));

    // A later version rewrites nothing judged under the older ones, and a rerun adds nothing.
    await applyManifest(door, manifest({ mystery: {} }), T0 + 50 * MIN);
    await writeWatermark(door, DEPENDENCY_JOB, T0 + 60 * MIN);
    await createAuditor({ clickhouse: door, windowMs: MIN, graceMs: 0, metrics, logger: silentLogger(), now: () => T0 + 60 * MIN }).runOnce();
    const after = await rows<{ n: string }>(ch, "SELECT count() AS n FROM {db:Identifier}.violations WHERE startsWith(invariant, 'M')", { db });
    expect(Number(after[0]?.n)).toBe(stored.length);
  });

  it('audits nothing while no manifest is loaded, then the first manifest reaches back to every stored call', async () => {
    const { ch, db, door } = await freshDatabase('mf');
    const old = [rawCall({ tool_id: 'mystery', t: T0 }), rawCall({ tool_id: 'search', t: T0 + 1000, args: { q: 1 } })];
    await insertCalls(ch, db, old, T0 + MIN);
    const metrics = new MetricsRegistry();
    const run = (now: number) => createAuditor({ clickhouse: door, windowMs: MIN, graceMs: 0, metrics, logger: silentLogger(), now: () => now }).runOnce();
    await writeWatermark(door, DEPENDENCY_JOB, T0 + 2 * MIN);
    await run(T0 + 2 * MIN);
    const none = await rows(ch, "SELECT * FROM {db:Identifier}.violations WHERE startsWith(invariant, 'M')", { db });
    expect(none).toEqual([]);
    await applyManifest(door, V1, T0 + 30 * 86_400_000);
    await run(T0 + 3 * MIN);
    const found = await rows<{ invariant: string; ids: string[] }>(ch, "SELECT invariant, ids FROM {db:Identifier}.violations WHERE startsWith(invariant, 'M') ORDER BY invariant", { db });
    expect(found).toEqual([
      { invariant: 'M1', ids: [old[0]?.call_id] },
      { invariant: 'M2', ids: [old[1]?.call_id] },
    ]);
  });
});
