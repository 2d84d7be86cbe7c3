/**
 * recordRun: an agent run goes out as an agent_run packet the ingest validator accepts
 * (harness.ts), keyed by its task like the task's calls; its name and error carry no secret; a
 * bad run is logged, never thrown, never sent. Oracles: the values passed in.
 */
import { describe, expect, it } from 'vitest';
import { createAuditEmitter, createMemoryTransport } from '../../../emit/index.ts';
import { ISO_MS, sent, setup, UUID } from './harness.ts';

describe('recordRun', () => {
  it('sends the run with its name, duration and status, keyed by its task', async () => {
    const { emitter, transport } = setup();
    const id = emitter.recordRun({ taskId: 'task-7', name: 'Refund request #4411', durationMs: 4000.4 });
    const given = '3B241101-E2BB-4255-8CAF-4136C566A962';
    emitter.recordRun({ runId: given, taskId: 'task-7', agentId: 'researcher', name: 'look up the order', durationMs: 12, error: 'gave up' });
    expect(id).toMatch(UUID);
    const { packets, messages } = await sent(emitter, transport);
    expect(messages.map((m) => m.key)).toEqual(['task-7', 'task-7']);
    const runs = packets.map((p) => (p as unknown as { run: Record<string, unknown> }).run);
    expect(runs[0]).toEqual({ run_id: id, task_id: 'task-7', agent_id: 'L', name: 'Refund request #4411', duration_ms: 4000, status: 'success', error: null, trace_id: null, span_id: null, parent_span_id: null, created_at: runs[0]?.created_at });
    expect(runs[0]?.created_at).toMatch(ISO_MS);
    expect(runs[1]).toMatchObject({ run_id: given.toLowerCase(), agent_id: 'researcher', name: 'look up the order', duration_ms: 12, status: 'error', error: 'gave up' });
  });

  it('logs a bad run and sends nothing for it', async () => {
    const warnings: unknown[] = [];
    const transport = createMemoryTransport();
    const logger = { warn: (o: unknown) => warnings.push(o), error: () => undefined, info: () => undefined, debug: () => undefined };
    const emitter = createAuditEmitter({ transport, orchestrator: 'kernel', agentId: 'L', buffer: { lingerMs: 1 }, logger });
    expect(emitter.recordRun({ taskId: '', name: 'n', durationMs: 1 })).toBeUndefined();
    expect(emitter.recordRun({ taskId: 't', name: 'x'.repeat(257), durationMs: 1 })).toBeUndefined();
    expect(emitter.recordRun({ taskId: 't', name: 'n', durationMs: -1 })).toBeUndefined();
    expect(emitter.recordRun({ taskId: 't', name: 'n', durationMs: 1, runId: 'nope' })).toBeUndefined();
    expect(await emitter.flush(1000)).toBe(true);
    expect(transport.messages()).toEqual([]);
    expect(warnings).toHaveLength(4);
  });
});
