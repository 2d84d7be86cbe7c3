/**
 * Model spans of each dialect, with their attributes as the instrumentations write them, mapped to
 * model_turn packets the decoder accepts. Oracles: the tokens, models and tool calls written here
 * by hand; for the price table, costs worked out by hand from its per-million prices.
 */
import { describe, expect, it } from 'vitest';
import { decodePacket } from '../../../ingest/decode-packet.ts';
import type { OtlpSpan } from '../../../ingest/otlp/otlp-decode.ts';
import { mapSpan } from '../../../ingest/otlp/span-map.ts';
import { priceOf, tableCost } from '../../../schemas/model-prices.ts';
import { Redactor } from '../../../schemas/redaction-policy.ts';

const OPTS = { taskIdAttribute: 'tool_audit.task_id', defaultOrchestrator: 'gateway' as const };
const span = (name: string, attributes: OtlpSpan['attributes'], over: Partial<OtlpSpan> = {}): OtlpSpan => ({
  traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name, kind: 3,
  startNs: 1_763_900_000_000_000_000n, endNs: 1_763_900_001_500_000_000n,
  attributes, status: { code: 0, message: '' }, events: [], resource: { 'service.name': 'agent' }, scope: { name: '', version: '' }, json: () => ({}), ...over,
});
const decode = (raw: string) => decodePacket({ raw, source: { kind: 'http', requestId: 'r', index: 0 } }, 1 << 20);

/** The turn a span maps to, as sent and as the decoder would store it. */
function turnOf(s: OtlpSpan) {
  const m = mapSpan(s, OPTS);
  if (m.kind !== 'turn') throw new Error(`${m.kind}${'reason' in m ? `: ${m.reason}` : ''}`);
  const d = decode(m.packets[0] as string);
  if (!d.ok || d.value.kind !== 'turn') throw new Error(JSON.stringify(d));
  return { sent: (JSON.parse(m.packets[0] as string) as { turn: Record<string, unknown> }).turn, row: d.value.row };
}

describe('model turn dialects', () => {
  it('OTel GenAI chat spans (pydantic-ai): model, provider, tokens, the tool calls of the output messages', () => {
    const { sent } = turnOf(span('chat gpt-4o', {
      'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.response.model': 'gpt-4o-2024-08-06', 'gen_ai.provider.name': 'openai',
      'gen_ai.usage.input_tokens': 1200, 'gen_ai.usage.output_tokens': 80, 'gen_ai.usage.cache_read.input_tokens': 1000, 'gen_ai.agent.name': 'planner',
      'gen_ai.output.messages': '[{"role":"assistant","parts":[{"type":"text","content":"ok"},{"type":"tool_call","id":"call_1","name":"search","arguments":{"q":"x"}},{"type":"tool_call","id":"call_2","name":"fetch"}]}]',
    }));
    expect(sent).toMatchObject({ model: 'gpt-4o-2024-08-06', provider: 'openai', input_tokens: 1200, output_tokens: 80, cached_input_tokens: 1000, agent_id: 'planner', duration_ms: 1500, status: 'success', cost_usd: null, trace_id: '5b8efff798038103d269b633813fc60c', span_id: 'eee19b7ec3c1b174' });
    expect(sent.requested_tool_calls).toEqual([{ id: 'call_1', tool_id: 'search' }, { id: 'call_2', tool_id: 'fetch' }]);
  });

  it('OpenInference LLM spans: token counts, reported cost, flattened tool calls in message order', () => {
    const { sent, row } = turnOf(span('ChatOpenAI', {
      'openinference.span.kind': 'LLM', 'llm.model_name': 'gpt-4o-mini', 'llm.provider': 'openai', 'llm.token_count.prompt': 300, 'llm.token_count.completion': 20, 'llm.cost.total': 0.00042,
      'llm.output_messages.0.message.tool_calls.1.tool_call.id': 'b', 'llm.output_messages.0.message.tool_calls.1.tool_call.function.name': 'fetch',
      'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'a', 'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'search',
    }));
    expect(sent).toMatchObject({ model: 'gpt-4o-mini', provider: 'openai', input_tokens: 300, output_tokens: 20, cost_usd: 0.00042, cost_source: 'reported' });
    expect(sent.requested_tool_calls).toEqual([{ id: 'a', tool_id: 'search' }, { id: 'b', tool_id: 'fetch' }]);
    expect(row.cost_usd).toBe(0.00042);
  });

  it('OpenLLMetry LLM spans and the AI SDK doGenerate spans', () => {
    const llmetry = turnOf(span('openai.chat', {
      'llm.request.type': 'chat', 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4.1', 'gen_ai.usage.prompt_tokens': 10, 'gen_ai.usage.completion_tokens': 5,
      'gen_ai.completion.0.tool_calls.0.id': 'c1', 'gen_ai.completion.0.tool_calls.0.name': 'lookup',
    }));
    expect(llmetry.sent).toMatchObject({ model: 'gpt-4.1', provider: 'openai', input_tokens: 10, output_tokens: 5, requested_tool_calls: [{ id: 'c1', tool_id: 'lookup' }] });
    const ai = turnOf(span('ai.generateText.doGenerate', {
      'ai.operationId': 'ai.generateText.doGenerate', 'ai.model.id': 'claude-3-5-haiku-latest', 'ai.model.provider': 'anthropic.messages', 'ai.usage.promptTokens': 40, 'ai.usage.completionTokens': 7,
      'ai.response.toolCalls': '[{"toolCallType":"function","toolCallId":"t9","toolName":"weather","args":"{}"}]',
    }));
    expect(ai.sent).toMatchObject({ model: 'claude-3-5-haiku-latest', provider: 'anthropic.messages', input_tokens: 40, output_tokens: 7, requested_tool_calls: [{ id: 't9', tool_id: 'weather' }] });
  });

  it('a model span without a start is quarantined with its reason, one without a model is a turn of model unknown; a failed turn keeps its error', () => {
    const m = mapSpan(span('chat', { 'gen_ai.operation.name': 'chat' }, { startNs: 0n }), OPTS);
    expect(m.kind).toBe('unmappable');
    if (m.kind === 'unmappable') expect(decode(m.packet)).toMatchObject({ ok: false, error: { code: 'otlp_unmappable', message: expect.stringContaining('no start time') } });
    expect(turnOf(span('chat', { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 3 })).sent).toMatchObject({ model: 'unknown', input_tokens: 3 });
    const failed = turnOf(span('chat', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm', 'error.type': 'rate_limit' }, { status: { code: 2, message: 'slow down' } }));
    expect(failed.sent).toMatchObject({ status: 'error', error: 'slow down' });
  });

  it('prices a turn its producer did not cost from the table, after the fingerprint: a re-priced table leaves the same turn a duplicate', () => {
    // 1000 input tokens of which 400 cached, 100 output, at gpt-4o's 2.5 / 1.25 / 10 per million.
    expect(tableCost('gpt-4o-2024-08-06', { input: 1000, output: 100, cachedInput: 400 })).toBeCloseTo((600 * 2.5 + 400 * 1.25 + 100 * 10) / 1e6, 10);
    expect(priceOf('openai/gpt-4o-mini')).toEqual({ input: 0.15, output: 0.6, cachedInput: 0.075 });
    expect(priceOf('test')).toBeUndefined();
    expect(tableCost('gpt-4o', { input: null, output: 1, cachedInput: null })).toBeNull();
    const s = span('chat', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 1000, 'gen_ai.usage.output_tokens': 100 });
    const { sent, row } = turnOf(s);
    expect(sent.cost_usd).toBeNull();
    expect(row).toMatchObject({ cost_usd: (1000 * 2.5 + 100 * 10) / 1e6, cost_source: 'price_table' });
    // The fingerprint is of the turn as sent: a packet carrying that very price stores the same
    // row, yet is another packet (its fingerprint differs), so a table changed later cannot make
    // the unpriced turn, sent again, conflict with what was stored.
    const m = mapSpan(s, OPTS);
    const priced = JSON.parse((m as { packets: string[] }).packets[0] as string) as { turn: Record<string, unknown> };
    Object.assign(priced.turn, { cost_usd: row.cost_usd, cost_source: 'price_table' });
    const d = decode(JSON.stringify(priced));
    if (!d.ok || d.value.kind !== 'turn') throw new Error(JSON.stringify(d));
    expect({ ...d.value.row, fingerprint: '' }).toEqual({ ...row, fingerprint: '' });
    expect(d.value.row.fingerprint).not.toBe(row.fingerprint);
    expect(turnOf(s).row.fingerprint).toBe(row.fingerprint);
  });

  it('stores each dialect\'s message attributes only with OTLP_TURN_MESSAGES=on, redacted; without, the packet and its fingerprint are what they were', () => {
    const on = { ...OPTS, turnMessages: true };
    const secret = 'sk-ant-api03-a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5-ABCDEFGH';
    const cases: Array<[OtlpSpan, Record<string, unknown>]> = [
      [span('chat', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.input.messages': '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]', 'gen_ai.output.messages': '[]', 'gen_ai.usage.input_tokens': 3 }),
        { 'gen_ai.input.messages': '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]', 'gen_ai.output.messages': '[]' }],
      [span('ChatOpenAI', { 'openinference.span.kind': 'LLM', 'llm.model_name': 'gpt-4o', 'llm.input_messages.0.message.role': 'user', 'llm.input_messages.0.message.content': 'hi', 'llm.output_messages.0.message.content': 'hello', 'llm.token_count.prompt': 3 }),
        { 'llm.input_messages.0.message.role': 'user', 'llm.input_messages.0.message.content': 'hi', 'llm.output_messages.0.message.content': 'hello' }],
      [span('openai.chat', { 'llm.request.type': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.prompt.0.content': 'hi', 'gen_ai.completion.0.content': 'hello' }), { 'gen_ai.prompt.0.content': 'hi', 'gen_ai.completion.0.content': 'hello' }],
      [span('ai.generateText.doGenerate', { 'ai.operationId': 'ai.generateText.doGenerate', 'ai.model.id': 'gpt-4o', 'ai.prompt.messages': '[{"role":"user","content":"hi"}]', 'ai.response.text': 'hello' }), { 'ai.prompt.messages': '[{"role":"user","content":"hi"}]', 'ai.response.text': 'hello' }],
    ];
    for (const [s, want] of cases) {
      const off = mapSpan(s, OPTS);
      expect(off.kind === 'turn' && off.packets[0]?.includes('"messages"'), s.name).toBe(false);
      const { sent, row } = (() => {
        const m = mapSpan(s, on);
        if (m.kind !== 'turn') throw new Error(m.kind);
        const d = decode(m.packets[0] as string);
        if (!d.ok || d.value.kind !== 'turn') throw new Error(JSON.stringify(d));
        return { sent: JSON.parse(m.packets[0] as string).turn, row: d.value.row };
      })();
      expect(JSON.parse(sent.messages), s.name).toEqual(want);
      expect(row.messages, s.name).toBe(sent.messages);
    }
    // No message attributes: no field at all, the same packet as with the setting off.
    const bare = span('chat', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' });
    expect(mapSpan(bare, on)).toEqual(mapSpan(bare, OPTS));
    // A turn's fingerprint is the same without the field and with it null; a text changes it.
    const base = (JSON.parse((mapSpan(bare, OPTS) as { packets: string[] }).packets[0] as string) as { turn: Record<string, unknown> }).turn;
    const fp = (turn: Record<string, unknown>) => {
      const d = decode(JSON.stringify({ type: 'model_turn', turn }));
      if (!d.ok) throw new Error(JSON.stringify(d.error));
      return d.value.row.fingerprint;
    };
    expect(fp({ ...base, messages: null })).toBe(fp(base));
    expect(fp({ ...base, messages: '{}' })).not.toBe(fp(base));
    // Redacted at ingest like every stored text.
    const withSecret = span('chat', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.input.messages': `[{"role":"user","parts":[{"type":"text","content":"use ${secret}"}]}]` });
    const m = mapSpan(withSecret, on) as { packets: string[] };
    const redacted = decodePacket({ raw: m.packets[0] as string, source: { kind: 'http', requestId: 'r', index: 0 } }, 1 << 20, new Redactor({ key: 'turn-messages-test-key-0123456789' }));
    if (!redacted.ok || redacted.value.kind !== 'turn') throw new Error('not a turn');
    expect(redacted.value.row.messages).not.toContain(secret);
    expect(redacted.value.row.messages).toContain('[redacted:');
  });
});
