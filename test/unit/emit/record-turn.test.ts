/**
 * recordTurn: a model turn goes out as a model_turn packet the ingest validator accepts
 * (harness.ts), keyed by its task like the task's calls; a bad turn is logged, never thrown,
 * never sent. Oracles: the values passed in.
 */
import { describe, expect, it } from 'vitest';
import { createAuditEmitter, createMemoryTransport } from '../../../emit/index.ts';
import { FOUND, SHAPES } from '../../helpers/secret-corpus.ts';
import { ISO_MS, sent, setup, UUID } from './harness.ts';

describe('recordTurn', () => {
  it('sends the turn with its tokens, cost and requested calls, keyed by its task', async () => {
    const { emitter, transport } = setup();
    const id = emitter.recordTurn({ taskId: 'task-7', model: 'gpt-4o', provider: 'openai', inputTokens: 1200, outputTokens: 40, cachedInputTokens: 1000, durationMs: 812.6, requestedToolCalls: [{ id: 'call_1', toolId: 'search' }, { toolId: 'fetch' }] });
    emitter.recordTurn({ taskId: 'task-7', model: 'in-house', costUsd: 0.002, durationMs: 5, status: 'error', error: 'overloaded' });
    expect(id).toMatch(UUID);
    const { packets, messages } = await sent(emitter, transport);
    expect(messages.map((m) => m.key)).toEqual(['task-7', 'task-7']);
    const turns = packets.map((p) => (p as unknown as { turn: Record<string, unknown> }).turn);
    expect(turns[0]).toMatchObject({ turn_id: id, task_id: 'task-7', agent_id: 'L', model: 'gpt-4o', provider: 'openai', input_tokens: 1200, output_tokens: 40, cached_input_tokens: 1000, cost_usd: null, cost_source: null, duration_ms: 813, status: 'success', error: null, requested_tool_calls: [{ id: 'call_1', tool_id: 'search' }, { id: null, tool_id: 'fetch' }] });
    expect(turns[0]?.created_at).toMatch(ISO_MS);
    expect(turns[1]).toMatchObject({ model: 'in-house', cost_usd: 0.002, cost_source: 'reported', status: 'error', error: 'overloaded', requested_tool_calls: [] });
  });

  it('sends the messages given, as JSON text, with the secrets of the corpus out when it redacts', async () => {
    const plain = setup();
    const said = { input: [{ role: 'user', content: 'weather in Oslo?' }], output: [{ role: 'assistant', tool_calls: [{ id: 'call_1', function: { name: 'lookup', arguments: '{"city": "Oslo"}' } }] }] };
    plain.emitter.recordTurn({ taskId: 't', model: 'm', durationMs: 1, messages: said });
    plain.emitter.recordTurn({ taskId: 't', model: 'm', durationMs: 1, messages: '{"already": "text"}' });
    plain.emitter.recordTurn({ taskId: 't', model: 'm', durationMs: 1 });
    const turns = (await sent(plain.emitter, plain.transport)).packets.map((p) => (p as unknown as { turn: Record<string, unknown> }).turn);
    expect(JSON.parse(turns[0]?.messages as string)).toEqual(said);
    expect(turns[1]?.messages).toBe('{"already": "text"}');
    expect(turns[2]).not.toHaveProperty('messages');

    const transport = createMemoryTransport();
    const emitter = createAuditEmitter({ transport, orchestrator: 'kernel', agentId: 'L', buffer: { lingerMs: 1 }, redaction: { key: 'record-turn-test-key-0123456789' } });
    const planted: string[] = [];
    for (const [, text, secret] of FOUND) {
      emitter.recordTurn({ taskId: 't', model: 'm', durationMs: 1, messages: [{ role: 'user', content: `use ${text}` }] });
      planted.push(secret);
    }
    for (const [, args, secrets] of SHAPES) {
      // As OpenAI's SDK gives a tool call: the arguments are JSON text.
      emitter.recordTurn({ taskId: 't', model: 'm', durationMs: 1, messages: [{ role: 'assistant', tool_calls: [{ id: 'c', function: { name: 'login', arguments: JSON.stringify(args) } }] }] });
      planted.push(...secrets);
    }
    const texts = (await sent(emitter, transport)).packets.map((p) => (p as unknown as { turn: { messages: string } }).turn.messages);
    expect(texts).toHaveLength(FOUND.length + SHAPES.length);
    for (const t of texts) {
      expect(t).toContain('[redacted:');
      expect(() => JSON.parse(t) as unknown).not.toThrow();
    }
    for (const secret of planted) expect(texts.join('\n')).not.toContain(secret);
  });

  it('logs a bad turn and sends nothing for it', async () => {
    const warnings: unknown[] = [];
    const transport = createMemoryTransport();
    const logger = { warn: (o: unknown) => warnings.push(o), error: () => undefined, info: () => undefined, debug: () => undefined };
    const emitter = createAuditEmitter({ transport, orchestrator: 'kernel', agentId: 'L', buffer: { lingerMs: 1 }, logger });
    expect(emitter.recordTurn({ taskId: '', model: 'm', durationMs: 1 })).toBeUndefined();
    expect(emitter.recordTurn({ taskId: 't', model: 'm', durationMs: 1, inputTokens: -3 })).toBeUndefined();
    expect(emitter.recordTurn({ taskId: 't', model: 'm', durationMs: 1, messages: () => 'not JSON' })).toBeUndefined();
    expect(await emitter.flush(1000)).toBe(true);
    expect(transport.messages()).toEqual([]);
    expect(warnings).toHaveLength(3);
  });
});
