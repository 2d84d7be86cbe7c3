/**
 * The invariant checks written as INSERT … SELECT build each violation exactly as
 * audit-rules.ts violation() does (key, packet type, ids, detail): rows recorded before the checks
 * moved into SQL and tests keyed on them stay consistent. Also: a backlog audited in many small
 * steps records the same as one step, and auditing again adds nothing.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { violation, type Violation } from '../../../analyzers/audit-rules.ts';
import { createAuditor, type AuditSteps } from '../../../analyzers/auditor.ts';
import { createDependencyAnalyzer } from '../../../analyzers/dependency-runner.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { doorOf, freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { dependency, outputArtifact, toolCall } from '../../helpers/packets.ts';

const BASE = Date.UTC(2026, 10, 20, 12);
const at = (ms: number) => new Date(BASE + ms).toISOString();

async function seeded(steps?: Partial<AuditSteps>) {
  const { ch, db } = await freshDatabase('checks');
  const metrics = new MetricsRegistry();
  const common = { clickhouse: doorOf(ch, db), windowMs: 60_000, metrics, logger: silentLogger() };
  const writer = createSegmentWriter({ ...common, maxPacketBytes: 1 << 20, dedupCacheEntries: 0 });
  const ok = toolCall({ created_at: at(0), instance_id: 'gw-1' }, 'seeded');
  const noError = toolCall({ tool_id: 'fetch_url', status: 'rate_limited', error: null, created_at: at(100), instance_id: 'gw-1' }, 'other');
  const failed = toolCall({ status: 'error', error: 'boom', created_at: at(200), instance_id: 'gw-1' }, 'other2');
  const outOfFailed = outputArtifact(failed.call_id);
  const orphanOut = outputArtifact(randomUUID());
  const twice = [outputArtifact(ok.call_id, 'first'), outputArtifact(ok.call_id, 'second'), outputArtifact(ok.call_id, 'third')];
  const orphanDep = dependency({ task_id: 'seeded', preceding_call_id: ok.call_id });
  const bothMissing = dependency({ task_id: 'seeded' });
  const backwards = toolCall({ created_at: at(-60_000), instance_id: 'gw-1' }, 'late');
  const packets = [ok, noError, failed, outOfFailed, orphanOut, ...twice, orphanDep, bothMissing, backwards];
  // One packet per write: each its own ingested_at, so steps of one row split them.
  for (const [offset, p] of packets.entries()) {
    await writer.write([{ raw: JSON.stringify(p), source: { kind: 'kafka', topic: 't', partition: 0, offset: String(offset) } }]);
  }
  await createDependencyAnalyzer({ ...common, overlapMs: 0 }).runOnce();
  const auditor = createAuditor({ ...common, graceMs: 0, now: () => Date.now() + 1000, ...(steps ? { steps } : {}) });
  const oids = twice.map((o) => o.output.output_id).sort();
  const expected: Violation[] = [
    violation('I4', 'no-error', 'tool_call', [noError.call_id], `status rate_limited of fetch_url has no error message`),
    violation('I8', 'call-not-success', 'output_artifact', [outOfFailed.output.output_id, failed.call_id], `output of call ${failed.call_id} whose status is error, not success`),
    violation('I8', 'no-call', 'output_artifact', [orphanOut.output.output_id, orphanOut.output.call_id], `output references call ${orphanOut.output.call_id}, which has no tool_call`),
    violation('I8', 'several-outputs', 'output_artifact', [ok.call_id, ...oids], `call ${ok.call_id} has 3 outputs; at most one is allowed`),
    violation('I9', 'missing-call', 'tool_dependency', [ok.call_id, orphanDep.dependency.succeeding_call_id], `dependency in task seeded references missing tool_call ${orphanDep.dependency.succeeding_call_id}`),
    violation('I9', 'missing-call', 'tool_dependency', [bothMissing.dependency.preceding_call_id, bothMissing.dependency.succeeding_call_id],
      `dependency in task seeded references missing tool_call ${bothMissing.dependency.preceding_call_id} and ${bothMissing.dependency.succeeding_call_id}`),
    violation('I11', 'backwards', 'tool_call', [backwards.call_id], `instance gw-1 sent created_at 2026-11-20 11:59:00.000 after 2026-11-20 12:00:00.200: time went backwards`),
  ];
  const recorded = async () =>
    (await rows<Violation>(ch, 'SELECT violation_key, invariant, packet_type, ids, detail FROM {db:Identifier}.violations ORDER BY violation_key', { db }));
  return { auditor, metrics, expected: expected.sort((a, b) => (a.violation_key < b.violation_key ? -1 : 1)), recorded };
}

describe('invariant checks in ClickHouse', () => {
  it('record exactly what violation() builds, once, and count it in the metric', async () => {
    const { auditor, metrics, expected, recorded } = await seeded();
    expect((await auditor.runOnce()).recorded).toBe(expected.length);
    expect(await recorded()).toEqual(expected);
    expect(metrics.value('tool_audit_violations_total', { invariant: 'I8' })).toBe(3);
    expect(metrics.value('tool_audit_violations_total', { invariant: 'I9' })).toBe(2);
    expect((await auditor.runOnce()).recorded).toBe(0);
    expect(await recorded()).toEqual(expected);
  });

  it('record the same in steps of one row', async () => {
    const { auditor, expected, recorded } = await seeded({ rows: 1, taskPage: 1, recordChunk: 1 });
    await auditor.runOnce();
    expect(await recorded()).toEqual(expected);
  });
});
