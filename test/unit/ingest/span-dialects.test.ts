/**
 * Tool spans of the dialects agents' instrumentations speak, as they set their attributes —
 * OpenInference (Arize Phoenix's conventions, e.g. openinference-instrumentation-langchain) and
 * OpenLLMetry (Traceloop's MCP, LangChain and decorator instrumentations) beside OTel GenAI — each
 * mapped to a tool_call (and its output) that passes every ingest rule. Oracles: the tool and the
 * arguments each span carries, written here by hand, and the decoder judging the packets.
 */
import { describe, expect, it } from 'vitest';
import { decodePacket } from '../../../ingest/decode-packet.ts';
import type { OtlpSpan } from '../../../ingest/otlp/otlp-decode.ts';
import { mapSpan } from '../../../ingest/otlp/span-map.ts';

const OPTS = { taskIdAttribute: 'tool_audit.task_id', defaultOrchestrator: 'gateway' as const };
const span = (name: string, attributes: OtlpSpan['attributes']): OtlpSpan => ({
  traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name,
  startNs: 1_763_900_000_000_000_000n, endNs: 1_763_900_000_120_000_000n,
  attributes, status: { code: 0, message: '' }, events: [], resource: { 'service.name': 'agent' }, scope: { name: '', version: '' }, json: {},
});

/** The call a span maps to: its tool, its args as stored, and the output's content; every packet judged by the decoder. */
function mapped(s: OtlpSpan): { tool: string; args: unknown; content: string | undefined } {
  const m = mapSpan(s, OPTS);
  if (m.kind !== 'tool') throw new Error(`${m.kind}${'reason' in m ? `: ${m.reason}` : ''}`);
  for (const p of m.packets) expect(decodePacket({ raw: p, source: { kind: 'http', requestId: 'r', index: 0 } }, 1 << 20).ok, p).toBe(true);
  const call = JSON.parse(m.packets[0] as string) as { invocation: { tool_id: string; args: unknown } };
  const output = m.packets[1] === undefined ? undefined : (JSON.parse(m.packets[1]) as { content: string }).content;
  return { tool: call.invocation.tool_id, args: call.invocation.args, content: output };
}

describe('tool span dialects', () => {
  it('OpenInference TOOL spans: JSON input, plain-text input, and the tool_call.function form', () => {
    expect(mapped(span('search', { 'openinference.span.kind': 'TOOL', 'tool.name': 'search', 'tool.parameters': '{"type":"object"}', 'input.value': '{"query": "weather in Paris", "k": 3}', 'input.mime_type': 'application/json', 'output.value': 'sunny' }))).toEqual({ tool: 'search', args: { query: 'weather in Paris', k: 3 }, content: 'sunny' });
    expect(mapped(span('calculator', { 'openinference.span.kind': 'TOOL', 'input.value': '2 + 2', 'input.mime_type': 'text/plain', 'output.value': '4' }))).toEqual({ tool: 'calculator', args: { input: '2 + 2' }, content: '4' });
    expect(mapped(span('tool', { 'openinference.span.kind': 'TOOL', 'tool_call.function.name': 'get_weather', 'tool_call.function.arguments': '{"city": "Oslo"}', 'tool_call.id': 'call_9' }))).toEqual({ tool: 'get_weather', args: { city: 'Oslo' }, content: undefined });
  });

  it('OpenLLMetry tool spans: MCP (tool_name, arguments), LangChain (inputs), decorators (args, kwargs), numbers as written', () => {
    const mcp = mapped(span('lookup.tool', { 'traceloop.span.kind': 'tool', 'traceloop.entity.name': 'lookup', 'traceloop.entity.input': '{"tool_name": "lookup", "arguments": {"key": "k1", "ratio": 1.0}}', 'traceloop.entity.output': '{"content": [{"type": "text", "text": "value of k1"}]}' }));
    expect(mcp.tool).toBe('lookup');
    expect(mcp.args).toEqual({ key: 'k1', ratio: 1 });
    expect(mcp.content).toContain('value of k1');
    expect(mapped(span('search_docs.tool', { 'traceloop.span.kind': 'tool', 'traceloop.entity.name': 'search_docs', 'traceloop.entity.input': '{"inputs": {"query": "refund policy"}, "tags": [], "metadata": {}, "kwargs": {}}' })).args).toEqual({ query: 'refund policy' });
    expect(mapped(span('get_city.tool', { 'traceloop.span.kind': 'tool', 'traceloop.entity.name': 'get_city', 'traceloop.entity.input': '{"args": [], "kwargs": {"city": "Paris"}}' })).args).toEqual({ city: 'Paris' });
    expect(mapped(span('echo.tool', { 'traceloop.span.kind': 'tool', 'traceloop.entity.name': 'echo', 'traceloop.entity.input': '{"inputs": "hello"}' })).args).toEqual({ input: 'hello' });
  });

  it('keeps a number literal of the arguments as sent in the args_hash (Python 1.0)', () => {
    const m = mapSpan(span('lookup.tool', { 'traceloop.span.kind': 'tool', 'traceloop.entity.input': '{"tool_name": "lookup", "arguments": {"ratio": 1.0}}' }), OPTS);
    if (m.kind !== 'tool') throw new Error(m.kind);
    expect(m.packets[0]).toContain('"args":{"ratio":1.0}');
  });

  it('ignores the dialects\' other spans (chains, LLM calls, agents)', () => {
    for (const attrs of [{ 'openinference.span.kind': 'LLM' }, { 'openinference.span.kind': 'CHAIN' }, { 'traceloop.span.kind': 'workflow' }, { 'traceloop.span.kind': 'task' }] as Array<OtlpSpan['attributes']>) {
      expect(mapSpan(span('x', attrs), OPTS).kind).toBe('ignored');
    }
  });
});
