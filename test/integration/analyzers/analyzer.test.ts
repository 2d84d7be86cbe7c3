import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAuditor } from '../../../analyzers/auditor.ts';
import { createDependencyAnalyzer } from '../../../analyzers/dependency-runner.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { freshDatabase, rows, doorOf } from '../../helpers/clickhouse.ts';
import { byTask } from '../../../queries/by-task.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { dependency, outputArtifact, toolCall } from '../../helpers/packets.ts';

const WINDOW = 60_000;
const BASE = Date.UTC(2026, 10, 20, 12);

interface GenCall { call_id: string; task: string; tool: string; t: number }

/** Expected pairs, enumerated naively from the generated calls. */
function bruteForce(calls: GenCall[]): Set<string> {
  const out = new Set<string>();
  for (const a of calls) for (const b of calls) {
    const d = b.t - a.t;
    if (a.task === b.task && d > 0 && d < WINDOW) out.add(`${a.call_id}>${b.call_id}:${d}`);
  }
  return out;
}

async function storedPairs(ch: ClickHouseClient, db: string): Promise<string[]> {
  const r = await rows<{ k: string }>(
    ch,
    "SELECT concat(toString(preceding_call_id), '>', toString(succeeding_call_id), ':', toString(time_delta_ms)) AS k FROM {db:Identifier}.tool_workflows",
    { db },
  );
  return r.map((x) => x.k);
}

function setup(ch: ClickHouseClient, db: string, now?: () => number) {
  const metrics = new MetricsRegistry();
  const common = { clickhouse: doorOf(ch, db), windowMs: WINDOW, metrics, logger: silentLogger() };
  return {
    metrics,
    writer: createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics, logger: silentLogger() }),
    analyzer: createDependencyAnalyzer({ ...common, overlapMs: 60_000 }),
    auditor: createAuditor({ ...common, graceMs: 0, now }),
  };
}

const packet = (c: GenCall) => JSON.stringify(toolCall({ call_id: c.call_id, tool_id: c.tool, created_at: new Date(c.t).toISOString() }, c.task));

describe('dependency analyzer on real ClickHouse', () => {
  // Calls created days before they are stored take the whole-task path; calls stored minutes
  // after they were made are linked through their step's look-back (dependency-window.ts).
  it.each([
    ['days late (whole tasks)', BASE],
    ['minutes after creation (step and look-back)', Date.now() - 600_000],
  ])('writes exactly the brute-force pair set for random tasks, arrival orders and redeliveries: calls stored %s', async (_name, base) => {
    const callArb = fc.record({ task: fc.constantFrom('A', 'B', 'C', 'D'), tool: fc.constantFrom('search_web', 'fetch_url', 'python_execute', 'create_chart'), t: fc.oneof(fc.integer({ min: 0, max: 180_000 }), fc.constantFrom(0, 60_000, 59_999, 60_001, 1)) });
    const scenario = fc
      .array(callArb, { minLength: 1, maxLength: 60 })
      .chain((raw) => {
        const calls = raw.map((c) => ({ ...c, call_id: randomUUID(), t: base + c.t }));
        const deliveries = [...calls, ...calls.filter((_, i) => i % 3 === 0)];
        return fc.tuple(fc.constant(calls), fc.shuffledSubarray(deliveries, { minLength: deliveries.length, maxLength: deliveries.length }), fc.integer({ min: 1, max: 5 }));
      });
    await fc.assert(
      fc.asyncProperty(scenario, async ([calls, deliveries, batches]) => {
        const { ch, db } = await freshDatabase('analyzer');
        const { writer, analyzer } = setup(ch, db);
        const size = Math.ceil(deliveries.length / batches);
        for (let i = 0; i < deliveries.length; i += size) {
          await writer.write(deliveries.slice(i, i + size).map((c, k) => ({ raw: packet(c), source: { kind: 'http', requestId: `b${i}`, index: k } })));
          await analyzer.runOnce(); // analysis interleaved with arrival
        }
        await analyzer.runOnce();
        await analyzer.runOnce(); // re-running adds nothing
        const got = await storedPairs(ch, db);
        expect(new Set(got).size).toBe(got.length);
        expect(new Set(got)).toEqual(bruteForce(calls));
      }),
      { numRuns: 12 },
    );
  }, 240_000);

  it('fills data_flow when a search result URL feeds the next fetch', async () => {
    const { ch, db } = await freshDatabase('dataflow');
    const { writer, analyzer } = setup(ch, db);
    const search = toolCall({ tool_id: 'search_web', created_at: new Date(BASE).toISOString() }, 'flow');
    const fetch = toolCall({ tool_id: 'fetch_url', args: { url: 'https://example.com/annual-report-2026' }, created_at: new Date(BASE + 900).toISOString() }, 'flow');
    const out = outputArtifact(search.call_id, JSON.stringify({ urls: ['https://example.com/annual-report-2026'] }), 'json');
    await writer.write([search, fetch, out].map((p, index) => ({ raw: JSON.stringify(p), source: { kind: 'http', requestId: 'r', index } })));
    await analyzer.runOnce();
    const [w] = await rows<{ data_flow: string | null; origin: string }>(ch, 'SELECT data_flow, toString(origin) AS origin FROM {db:Identifier}.tool_workflows', { db });
    expect(w?.origin).toBe('analyzer');
    expect(w?.data_flow).toContain('https://example.com/annual-report-2026');
  });
});

describe('auditor', () => {
  it('reports nothing on clean data', async () => {
    const { ch, db } = await freshDatabase('audit_clean');
    const { writer, analyzer, auditor } = setup(ch, db, () => Date.now() + 1000);
    const a = toolCall({ created_at: new Date(BASE).toISOString() }, 'clean');
    const b = toolCall({ status: 'error', error: 'HTTP 500', created_at: new Date(BASE + 500).toISOString() }, 'clean');
    const o = outputArtifact(a.call_id);
    await writer.write([a, b, o].map((p, index) => ({ raw: JSON.stringify(p), source: { kind: 'http', requestId: 'c', index } })));
    await analyzer.runOnce();
    expect((await auditor.runOnce()).found).toBe(0);
    expect(await rows(ch, 'SELECT * FROM {db:Identifier}.violations', { db })).toEqual([]);
  });

  // Calls made days before they are stored are audited whole (I10 by task); calls stored minutes
  // after they were made, through the step's look-back (dependency-window.ts).
  it.each([
    ['days late', BASE],
    ['minutes after creation', Date.now() - 600_000],
  ])('finds each seeded violation kind once, and only after the grace period: calls stored %s', async (_name, BASE) => {
    const { ch, db } = await freshDatabase('audit_seeded');
    let now = Date.now();
    const { writer, analyzer, auditor } = setup(ch, db, () => now);
    const ok = toolCall({ created_at: new Date(BASE).toISOString(), instance_id: 'gw-1' }, 'seeded');
    const noError = toolCall({ status: 'timeout', error: null, created_at: new Date(BASE + 100).toISOString(), instance_id: 'gw-1' }, 'other'); // I4
    const failed = toolCall({ status: 'error', error: 'boom', created_at: new Date(BASE + 200).toISOString(), instance_id: 'gw-1' }, 'other2');
    const outOfFailed = outputArtifact(failed.call_id); // I8: output of a failed call
    const orphanOut = outputArtifact(randomUUID()); // I8: no call
    const twice1 = outputArtifact(ok.call_id, 'first');
    const twice2 = outputArtifact(ok.call_id, 'second'); // I8: two outputs for one call
    const orphanDep = dependency({ task_id: 'seeded', preceding_call_id: ok.call_id }); // I9: succeeding call missing
    const backwards = toolCall({ created_at: new Date(BASE - 60_000).toISOString(), instance_id: 'gw-1' }, 'late'); // I11: after newer ones from gw-1
    const packets = [ok, noError, failed, outOfFailed, orphanOut, twice1, twice2, orphanDep, backwards];
    await writer.write(packets.map((p, index) => ({ raw: JSON.stringify(p), source: { kind: 'kafka', topic: 't', partition: 0, offset: String(index) } })));
    // I10: a pair that the analyzer never saw — its rows are written after the analyzer's run and
    // the watermark is moved past them by a second, empty run.
    const x = toolCall({ created_at: new Date(BASE + 1000).toISOString() }, 'unlinked');
    const y = toolCall({ created_at: new Date(BASE + 2000).toISOString() }, 'unlinked');
    await analyzer.runOnce();

    now = Date.now() - 3600_000; // inside the grace period: nothing may be reported yet
    const early = await auditor.runOnce();
    expect(early.found).toBe(0);

    now = Date.now() + 1000;
    const first = await auditor.runOnce();
    const v = await rows<{ invariant: string; violation_key: string; detail: string }>(ch, 'SELECT invariant, violation_key, detail FROM {db:Identifier}.violations ORDER BY violation_key', { db });
    const kinds = v.map((r) => r.violation_key.split('/').slice(0, 2).join('/'));
    expect(kinds.sort()).toEqual(['I11/backwards', 'I4/no-error', 'I8/call-not-success', 'I8/no-call', 'I8/several-outputs', 'I9/missing-call']);
    expect(first.recorded).toBe(6);
    for (const r of v) expect(r.detail.length).toBeGreaterThan(10);

    // Recorded once: auditing again (even the same slice) adds nothing.
    await auditor.runOnce();
    expect(await rows(ch, 'SELECT 1 FROM {db:Identifier}.violations', { db })).toHaveLength(6);

    // I10: insert two calls bypassing the analyzer's view of time (analyzer disabled), then audit.
    await writer.write([x, y].map((p, index) => ({ raw: JSON.stringify(p), source: { kind: 'http', requestId: 'u', index } })));
    const blind = createDependencyAnalyzer({ clickhouse: doorOf(ch, db), windowMs: 1, overlapMs: 0, metrics: new MetricsRegistry(), logger: silentLogger() });
    await blind.runOnce(); // moves the analyzer watermark without linking (window of 1 ms)
    now = Date.now() + 2000;
    await auditor.runOnce();
    const i10 = await rows<{ violation_key: string }>(ch, "SELECT violation_key FROM {db:Identifier}.violations WHERE invariant = 'I10'", { db });
    expect(i10.map((r) => r.violation_key)).toEqual([`I10/missing/${x.call_id},${y.call_id}`]);
  });

  it("takes an orchestrator's own dependency for a pair the analyzer linked: written once, read as the pair's one dependency with the producer's data_flow", async () => {
    const { ch, db } = await freshDatabase('emitted_after');
    let now = Date.now();
    const { writer, analyzer, auditor } = setup(ch, db, () => now);
    const post = (ps: object[], tag: string) => writer.write(ps.map((p, index) => ({ raw: JSON.stringify(p), source: { kind: 'http', requestId: tag, index } })));
    const cases = [
      { task: 'plain', dataFlow: null },
      { task: 'with-flow', dataFlow: 'search result URL → fetch_url.url' },
    ];
    for (const c of cases) {
      const a = toolCall({ tool_id: 'search_web', created_at: new Date(BASE).toISOString() }, c.task);
      const b = toolCall({ tool_id: 'fetch_url', created_at: new Date(BASE + 3000).toISOString() }, c.task);
      await post([a, b], `calls-${c.task}`);
      await analyzer.runOnce();
      const dep = dependency({ task_id: c.task, preceding_call_id: a.call_id, succeeding_call_id: b.call_id, preceding_tool_id: 'search_web', succeeding_tool_id: 'fetch_url', time_delta_ms: 3000, data_flow: c.dataFlow });
      expect((await post([dep], `dep-${c.task}`))[0]).toMatchObject({ status: 'accepted' });
      // Redelivered: a duplicate; a different packet for the pair: still an I1 conflict.
      expect((await post([dep], `again-${c.task}`))[0]).toMatchObject({ status: 'duplicate' });
      const other = dependency({ ...dep.dependency, time_delta_ms: 2999 });
      expect((await post([other], `other-${c.task}`))[0]).toMatchObject({ status: 'rejected', reason: { code: 'I1_dependency_reused' } });
      const view = await byTask(doorOf(ch, db), db, { taskId: c.task, window: { fromMs: 0, toMs: Date.UTC(2200, 0, 1) }, limit: 10 }, DEFAULT_QUERY_CONTEXT);
      expect(view.dependencies).toEqual([expect.objectContaining({ preceding_call_id: a.call_id, succeeding_call_id: b.call_id, origin: 'emitted', data_flow: c.dataFlow })]);
      const origins = await rows<{ o: string }>(ch, 'SELECT toString(origin) AS o FROM {db:Identifier}.tool_workflows WHERE task_id = {t:String} ORDER BY o', { db, t: c.task });
      expect(origins.map((r) => r.o)).toEqual(['analyzer', 'emitted']);
    }
    expect(await rows(ch, "SELECT 1 FROM {db:Identifier}.quarantine WHERE reason_code != 'I1_dependency_reused'", { db })).toEqual([]);
    await analyzer.runOnce();
    now = Date.now() + 1000;
    await auditor.runOnce();
    // The pair counts as one dependency: no I10 'duplicated'.
    expect(await rows(ch, "SELECT violation_key FROM {db:Identifier}.violations WHERE invariant = 'I10'", { db })).toEqual([]);
  });
});
