/**
 * The demo workload through the real pipeline, analyzer and auditor: every read pattern has
 * something to show, and the only violation is the one the demo means to show.
 */
import { describe, expect, it } from 'vitest';
import { createAuditor } from '../../../analyzers/auditor.ts';
import { createDependencyAnalyzer } from '../../../analyzers/dependency-runner.ts';
import { applyManifest } from '../../../analyzers/manifest-store.ts';
import { DEMO_MANIFEST } from '../../../cli/demo-manifest.ts';
import { parseManifest } from '../../../schemas/tool-manifest.ts';
import { MAX_TIME_MS } from '../../../api/read-params.ts';
import { demoPackets } from '../../../cli/demo.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { createReadQueries } from '../../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { freshDatabase, rows } from '../../helpers/clickhouse.ts';

describe('tool-audit demo', () => {
  it('shows every read pattern and no violation it did not mean to show', async () => {
    const { ch, db, door } = await freshDatabase('demo');
    const manifest = parseManifest(DEMO_MANIFEST);
    expect(manifest).toMatchObject({ ok: true, warnings: [] });
    if (!manifest.ok) return;
    await applyManifest(door, manifest.manifest);
    const demo = demoPackets({ tasks: 30, seed: 7, endMs: Date.now() - 60_000, hours: 6 });
    const common = { clickhouse: door, metrics: new MetricsRegistry(), logger: silentLogger() };
    const writer = createSegmentWriter({ ...common, maxPacketBytes: 1 << 20, dedupCacheEntries: 100 });
    // As `tool-audit demo` posts them: batches of 500, each its own request.
    for (let i = 0; i < demo.packets.length; i += 500) {
      const batch = demo.packets.slice(i, i + 500);
      const out = await writer.write(batch.map((p, index) => ({ raw: JSON.stringify(p), source: { kind: 'http', requestId: `demo-${i}`, index } })));
      expect(out.filter((o) => o.status !== 'accepted')).toEqual([]);
    }
    await createDependencyAnalyzer({ ...common, windowMs: 60_000, overlapMs: 60_000 }).runOnce();
    await createAuditor({ ...common, windowMs: 60_000, graceMs: 0, now: () => Date.now() + 1000 }).runOnce();
    const violations = await rows<{ invariant: string; ids: string[] }>(ch, 'SELECT invariant, ids FROM {db:Identifier}.violations ORDER BY invariant', { db });
    type Inv = { call_id: string; tool_id: string; status: string; error: unknown; duration_ms: number };
    const calls = demo.packets.map((p) => p.invocation as Inv | undefined).filter((i): i is Inv => i !== undefined);
    const id = (pred: (i: Inv) => boolean) => calls.find(pred)?.call_id;
    const mail = id((i) => i.tool_id === 'mail_read');
    expect(violations).toEqual([
      { invariant: 'I4', ids: [id((i) => i.status === 'timeout' && i.error === null)] },
      { invariant: 'M1', ids: [id((i) => i.tool_id === 'legacy_export')] },
      { invariant: 'M3', ids: [id((i) => i.tool_id === 'python_execute' && i.duration_ms === 75_000)] },
      { invariant: 'M6', ids: [mail, mail, id((i) => i.tool_id === 'webhook_post')] },
    ]);

    const q = createReadQueries(door, db, DEFAULT_QUERY_CONTEXT);
    const window = { fromMs: 0, toMs: MAX_TIME_MS };
    const page = { window, limit: 10 };
    expect((await q.tools({ window, limit: 10 })).tools.length).toBeGreaterThan(3);
    expect((await q.task({ taskId: demo.tasks[0] as string, ...page })).invocations.length).toBeGreaterThan(3);
    expect((await q.agentTools({ agentId: 'Ops', ...page })).invocations.length).toBeGreaterThan(0);
    expect((await q.slow({ thresholdMs: 30_000, ...page })).count).toBeGreaterThan(0);
    expect((await q.expensive({ thresholdUsd: 1, ...page })).count).toBeGreaterThan(0);
    expect((await q.failed(page)).count).toBeGreaterThan(0);
    expect((await q.dedup({ minCount: 2, ...page })).groups.length).toBeGreaterThan(0);
    expect((await q.identicalOutputs({ minCount: 2, ...page })).groups.length).toBeGreaterThan(0);
    expect((await q.sequences({ length: 3, minCount: 2, ...page })).sequences.length).toBeGreaterThan(0);
    expect((await q.violations(page)).violations).toHaveLength(4);
    expect((await q.violations({ ...page, invariant: 'M6' })).violations).toHaveLength(1);
    expect(Object.keys((await q.manifest({})).tools)).toHaveLength(Object.keys(DEMO_MANIFEST).length);
    expect((await q.manifestHistory({ toolId: 'search_web' })).versions).toHaveLength(1);
    const sim = await q.cacheSimulation({ window });
    for (const tool of ['search_web', 'fetch_url']) expect(sim.tools.find((t) => t.tool_id === tool)?.hits, tool).toBeGreaterThan(0);
    const curve = await q.ttlCurve({ toolId: 'search_web', window });
    expect(curve.suggested_ttl_ms).not.toBeNull();
  });
});
