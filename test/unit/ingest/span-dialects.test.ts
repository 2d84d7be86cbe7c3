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
const span = (name: string, attributes: OtlpSpan['attributes'], over: Partial<OtlpSpan> = {}): OtlpSpan => ({
  traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name, kind: 1,
  startNs: 1_763_900_000_000_000_000n, endNs: 1_763_900_000_120_000_000n,
  attributes, status: { code: 0, message: '' }, events: [], resource: { 'service.name': 'agent' }, scope: { name: '', version: '' }, json: () => ({}), ...over,
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

  it('ignores the dialects\' other spans (inner chains, tasks, retrievers); LLM spans are model turns, agents and workflows are runs', () => {
    expect(mapSpan(span('x', { 'openinference.span.kind': 'LLM' }), OPTS).kind).toBe('turn');
    for (const attrs of [{ 'openinference.span.kind': 'AGENT' }, { 'traceloop.span.kind': 'workflow' }, { 'traceloop.span.kind': 'agent' }] as Array<OtlpSpan['attributes']>) {
      expect(mapSpan(span('x', attrs), OPTS).kind).toBe('run');
    }
    for (const attrs of [{ 'openinference.span.kind': 'CHAIN' }, { 'openinference.span.kind': 'RETRIEVER' }, { 'traceloop.span.kind': 'task' }] as Array<OtlpSpan['attributes']>) {
      expect(mapSpan(span('x', attrs, { parentSpanId: '00f067aa0ba902b7' }), OPTS).kind).toBe('ignored');
    }
  });

  it('MCP tools/call spans (OTel MCP conventions): one call of the client and server spans, whichever side is chosen', () => {
    const SERVER = 2;
    const CLIENT = 3;
    const args = '{"city": "Oslo"}';
    // The Python SDK's client span names its tool only in the span name; the server's says execute_tool.
    const client = span('MCP send tools/call get_weather', { 'mcp.method.name': 'tools/call', 'jsonrpc.request.id': '7', 'gen_ai.tool.call.arguments': args }, { kind: CLIENT, spanId: '1111111111111111' });
    const server = span('tools/call get_weather', { 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather', 'jsonrpc.request.id': '7', 'mcp.session.id': 's-1' }, { kind: SERVER, spanId: '2222222222222222', parentSpanId: '1111111111111111' });
    const orphan = { ...server, spanId: '3333333333333333', parentSpanId: undefined };
    const kinds = (side: 'client' | 'server' | undefined) => [client, server, orphan].map((s) => mapSpan(s, { ...OPTS, ...(side ? { mcpCallSide: side } : {}) }).kind);
    // Client side (the default): the client's span; a server span only when no client continued the trace.
    expect(kinds(undefined)).toEqual(['tool', 'ignored', 'tool']);
    expect(kinds('client')).toEqual(['tool', 'ignored', 'tool']);
    expect(kinds('server')).toEqual(['ignored', 'tool', 'tool']);
    expect(mapped(client)).toEqual({ tool: 'get_weather', args: { city: 'Oslo' }, content: undefined });
    const m = mapSpan(orphan, OPTS);
    if (m.kind !== 'tool') throw new Error(m.kind);
    expect(JSON.parse(m.packets[0] as string).invocation.result_summary.mcp).toEqual({ side: 'server', request_id: '7', session_id: 's-1' });
    // Other MCP methods are no calls, even with a tool's name.
    expect(mapSpan(span('tools/list', { 'mcp.method.name': 'tools/list', 'gen_ai.tool.name': 'x' }, { kind: CLIENT }), OPTS).kind).toBe('ignored');
  });
});
