/**
 * M9 (approvals) on calls written through the segment writer, against an oracle written here: a
 * tool with requires_approval, one with the three capability tags (tool-smith: approval required
 * whatever else is set), one without; a second manifest version that drops the requirement;
 * approvals absent, before the call, at its millisecond, after it, and in other offsets; calls
 * with and without a task. Also: the task view serves each approval as sent, and a redelivered
 * call with an approval is a duplicate while its call_id with another approval is I1.
 */
import { describe, expect, it } from 'vitest';
import { createAuditor } from '../../../analyzers/auditor.ts';
import { DEPENDENCY_JOB } from '../../../analyzers/dependency-runner.ts';
import { applyManifest } from '../../../analyzers/manifest-store.ts';
import { writeWatermark } from '../../../analyzers/store.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { createReadQueries } from '../../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { count, freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { toolCall } from '../../helpers/packets.ts';
import { rng } from '../../helpers/rng.ts';
import { manifestOf } from '../../helpers/manifests.ts';

const T0 = Date.UTC(2026, 10, 1, 10);
const MIN = 60_000;

const manifest = manifestOf;

const TRIFECTA = { accesses_private_data: true, receives_untrusted_input: true, communicates_externally: true };
const V1 = manifest({ wire: { requires_approval: true }, mailer: TRIFECTA, search: {} });
const V2 = manifest({ wire: {}, mailer: TRIFECTA, search: {} });
const V2_AT = T0 + 30 * MIN;

interface Sent {
  call_id: string;
  tool: string;
  t: number;
  /** epoch ms of the approval, or null for none. */
  approvedMs: number | null;
  approval: Record<string, string> | undefined;
}

/** An offset form of a UTC instant (+05:30), to check that approved_at is compared as an instant. */
const withOffset = (ms: number) => new Date(ms + 330 * 60_000).toISOString().replace('Z', '+05:30');

function workload(seed: number): Sent[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const out: Sent[] = [];
  for (let i = 0; i < 200; i++) {
    const tool = pick(['wire', 'wire', 'mailer', 'search']);
    const t = T0 + Math.floor(r() * 60 * MIN);
    const when = pick(['none', 'before', 'same', 'after', 'offset-before', 'offset-after'] as const);
    const approvedMs = when === 'none' ? null : when.endsWith('before') ? t - 1 - Math.floor(r() * 3_600_000) : when === 'same' ? t : t + 1 + Math.floor(r() * 10_000);
    const approval =
      approvedMs === null
        ? undefined
        : { approved_by: pick(['dana', 'Zoë "ops"']), approved_at: when.startsWith('offset') ? withOffset(approvedMs) : new Date(approvedMs).toISOString(), ...(r() < 0.5 ? { reference: `CHG-${i}` } : {}) };
    out.push({ call_id: crypto.randomUUID(), tool, t, approvedMs, approval });
  }
  return out;
}

/** Expected `kind:call_id` of every M9 finding. */
function oracle(sent: Sent[]): string[] {
  const out: string[] = [];
  for (const s of sent) {
    const needs = s.tool === 'mailer' || (s.tool === 'wire' && s.t < V2_AT);
    if (!needs) continue;
    if (s.approvedMs === null) out.push(`approval_missing:${s.call_id}`);
    else if (s.approvedMs > s.t) out.push(`approval_late:${s.call_id}`);
  }
  return out.sort();
}

describe('M9: calls of tools that need approval', () => {
  it('finds exactly the calls the oracle finds; the task view serves each approval; redelivery and reuse', async () => {
    const { ch, db, door } = await freshDatabase('m9');
    const metrics = new MetricsRegistry();
    const writer = createSegmentWriter({ clickhouse: door, metrics, logger: silentLogger(), maxPacketBytes: 1 << 20, dedupCacheEntries: 0 });
    const sent = workload(21);
    const packet = (s: Sent) => toolCall({ call_id: s.call_id, tool_id: s.tool, created_at: new Date(s.t).toISOString(), ...(s.approval ? { approval: s.approval } : {}) }, s.tool === 'search' ? null : `task-${s.t % 7}`);
    let offset = 0;
    const write = (ps: object[]) => writer.write(ps.map((p) => ({ raw: JSON.stringify(p), source: { kind: 'kafka' as const, topic: 't', partition: 0, offset: String(offset++) } })));
    await applyManifest(door, V1, T0);
    await applyManifest(door, V2, V2_AT);
    await writeWatermark(door, DEPENDENCY_JOB, Date.now() + 3_600_000);
    const run = () => createAuditor({ clickhouse: door, windowMs: MIN, graceMs: 0, metrics, logger: silentLogger(), now: () => Date.now() }).runOnce();
    await write(sent.slice(0, 100).map(packet));
    await run();
    await write(sent.slice(100).map(packet));
    await run();

    const got = await rows<{ k: string; ids: string[] }>(ch, "SELECT violation_key AS k, ids FROM {db:Identifier}.violations WHERE invariant = 'M9'", { db });
    expect(got.map((v) => `${v.k.split('/')[1]}:${v.ids.join(',')}`).sort()).toEqual(oracle(sent));
    const kinds = new Set(oracle(sent).map((k) => k.split(':')[0]));
    expect([...kinds].sort()).toEqual(['approval_late', 'approval_missing']);
    expect(sent.some((s) => s.tool !== 'search' && s.approvedMs !== null && s.approvedMs <= s.t)).toBe(true);

    // The task view serves the approval as sent, approved_at in UTC.
    const q = createReadQueries(door, db, DEFAULT_QUERY_CONTEXT);
    const withOne = sent.find((s) => s.tool === 'wire' && s.approval?.reference && s.approval?.approved_at?.endsWith('+05:30')) as Sent;
    const window = { fromMs: 0, toMs: Date.UTC(2100, 0, 1) };
    const view = await q.task({ taskId: `task-${withOne.t % 7}`, window, limit: 1000 });
    const served = view.invocations.find((c) => c.call_id === withOne.call_id);
    expect(served?.approval).toEqual({ approved_by: withOne.approval?.approved_by, approved_at: new Date(withOne.approvedMs as number).toISOString(), reference: withOne.approval?.reference });
    const none = sent.find((s) => s.tool === 'wire' && s.approval === undefined) as Sent;
    const noneView = await q.task({ taskId: `task-${none.t % 7}`, window, limit: 1000 });
    expect(noneView.invocations.find((c) => c.call_id === none.call_id)?.approval).toBeNull();

    // The same packet again is a duplicate; its call_id with another approval is a reuse (I1).
    await write([packet(withOne), packet({ ...withOne, approval: { ...(withOne.approval as Record<string, string>), approved_by: 'mallory' } })]);
    expect(await count(ch, db, 'tool_invocations', `call_id = '${withOne.call_id}'`)).toBe(1);
    const q1 = await rows<{ reason: string }>(ch, 'SELECT reason_code AS reason FROM {db:Identifier}.quarantine', { db });
    expect(q1.map((r) => r.reason)).toEqual(['I1_call_id_reused']);
    await run();
    expect(await count(ch, db, 'violations', "invariant = 'M9'")).toBe(got.length);
  });
});
