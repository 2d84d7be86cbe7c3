/**
 * recordCall: a call that ran elsewhere (the MCP gateway) is recorded as invoke would have, and
 * the ingest validator accepts every packet (harness.ts); args given as canonical text are sent
 * and hashed as that text, numbers as the producer wrote them.
 */
import { describe, expect, it } from 'vitest';
import { sent, setup, sha, UUID } from './harness.ts';

describe('recordCall', () => {
  it('a success with content: tool_call and output_artifact under the call_id given', async () => {
    const { emitter, transport } = setup();
    const id = emitter.recordCall({ callId: '6f1c2a34-0000-4000-8000-000000000001', toolId: 'fs/read', args: { path: '/a' }, taskId: 'sess-1', agentId: 'claude', durationMs: 12.4, status: 'success', resultSummary: { blocks: 1 }, content: { text: 'hello', contentType: 'text', embed: false } });
    expect(id).toBe('6f1c2a34-0000-4000-8000-000000000001');
    const { calls, outputs } = await sent(emitter, transport);
    expect(calls).toMatchObject([{ call_id: id, task_id: 'sess-1', tool_id: 'fs/read', agent_id: 'claude', status: 'success', error: null, duration_ms: 12, result_summary: { blocks: 1 }, args_hash: sha('{"path": "/a"}') }]);
    expect(outputs).toMatchObject([{ call_id: id, content_type: 'text', content_hash: sha('hello') }]);
  });

  it('canonical args are spliced and hashed as written (1.0 stays a float, 1e-07 as Python writes it)', async () => {
    const { emitter, transport } = setup();
    const canonical = '{"a": 1.0, "b": 1e-07, "s": "\\u00e9"}';
    emitter.recordCall({ toolId: 't', args: { a: 1, b: 1e-7, s: 'é' }, argsCanonical: canonical, durationMs: 1, status: 'success' });
    await emitter.flush();
    const raw = transport.messages()[0]?.value ?? '';
    expect(raw).toContain(`"args":${canonical}`);
    const { calls } = await sent(emitter, transport);
    expect(calls[0]?.args_hash).toBe(sha(canonical));
  });

  it('a failure carries its error and no artifact, even when content is given', async () => {
    const { emitter, transport } = setup();
    emitter.recordCall({ toolId: 't', args: {}, durationMs: 3, status: 'timeout', error: 'cancelled by the client: timed out', content: { text: 'partial', contentType: 'text', embed: false } });
    emitter.recordCall({ toolId: 't', args: {}, durationMs: 3, status: 'error' });
    const { calls, outputs } = await sent(emitter, transport);
    expect(calls.map((c) => [c.status, c.error])).toEqual([
      ['timeout', 'cancelled by the client: timed out'],
      ['error', 'error'],
    ]);
    expect(calls[0]?.call_id).toMatch(UUID);
    expect(outputs).toEqual([]);
  });

  it('an approval goes into the packet in UTC; a malformed one is dropped, the call still recorded', async () => {
    const { emitter, transport } = setup();
    emitter.recordCall({ toolId: 'wire', args: {}, durationMs: 1, status: 'success', approval: { approvedBy: 'dana', approvedAt: '2026-11-22T11:00:00.250+01:00', reference: 'CHG-7' } });
    emitter.recordCall({ toolId: 'wire', args: {}, durationMs: 1, status: 'success', approval: { approvedBy: 'dana', approvedAt: 'yesterday' } });
    emitter.recordCall({ toolId: 'wire', args: {}, durationMs: 1, status: 'success' });
    const { calls } = await sent(emitter, transport);
    expect(calls.map((c) => (c as { approval?: unknown }).approval)).toEqual([{ approved_by: 'dana', approved_at: '2026-11-22T10:00:00.250Z', reference: 'CHG-7' }, undefined, undefined]);
  });

  it('checkBudget without the budget option is undefined', async () => {
    const { emitter } = setup();
    await expect(emitter.checkBudget({ toolId: 't', args: {}, callId: 'c' })).resolves.toBeUndefined();
  });
});
