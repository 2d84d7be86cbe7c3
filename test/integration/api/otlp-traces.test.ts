/**
 * POST /v1/traces with the official OpenTelemetry JS SDK as the client: a realistic agent run
 * (an agent span, model spans, GenAI execute_tool spans, an AI SDK ai.toolCall span, a tool span
 * whose arguments are not an object) exported by the OTLP/HTTP exporters — protobuf (gzip) and
 * JSON — to a listening server on embedded ClickHouse. The oracle is what the SDK recorded and
 * CPython's json module: rows equal the exported tool spans, re-export adds nothing.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { ROOT_CONTEXT, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { FastifyInstance } from 'fastify';
import { v5 as uuidv5 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { OTLP_ID_NAMESPACE } from '../../../ingest/otlp/span-map.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import { count, doorOf, freshDatabase, rows } from '../../helpers/clickhouse.ts';

const KEY = 'otlp-ingest-key-0123456789';
let ch: ClickHouseClient;
let db: string;
let app: FastifyInstance;
let url: string;
const metrics = new MetricsRegistry();

beforeAll(async () => {
  ({ ch, db } = await freshDatabase('otlp'));
  const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 64 * 1024, dedupCacheEntries: 0, metrics, logger: silentLogger() });
  app = buildApp({
    ingest: { submit: (p) => writer.write(p) },
    readiness: async () => ({ ready: true, checks: {} }),
    metrics,
    apiKeys: [{ key: KEY, scopes: ['ingest'] }],
    maxBodyBytes: 4 * 1024 * 1024,
    logger: silentLogger(),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1/traces`;
});
afterAll(async () => app.close());

/** CPython's canonical args (SPEC §2), the oracle for stored args and args_hash. */
function pythonCanonical(args: unknown): string {
  const r = spawnSync('python3', ['-c', 'import json,sys; sys.stdout.write(json.dumps(json.loads(sys.stdin.read()), sort_keys=True))'], { input: JSON.stringify(args), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout;
}
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
// An hour ago: rows older than the retention would be dropped by TTL as they are inserted.
const T0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;

interface ToolSpec {
  tool: string;
  args: unknown;
  result?: string;
  offsetMs: number;
  durationMs: number;
  errorType?: string;
  aiSdk?: boolean;
  cost?: number;
}

/** One agent run: agent span → model span → tool spans, recorded by the SDK in memory. */
function agentRun(tracer: Tracer, task: string | undefined, tools: ToolSpec[]): void {
  const agent = tracer.startSpan('invoke_agent QA_Agent', { startTime: T0, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'QA_Agent' } });
  const ctx = trace.setSpan(ROOT_CONTEXT, agent);
  const chat = tracer.startSpan('chat gpt-5', { startTime: T0 + 1, attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 900 } }, ctx);
  chat.end(T0 + 5);
  for (const t of tools) {
    const attributes: Record<string, string | number> = t.aiSdk
      ? { 'ai.operationId': 'ai.toolCall', 'ai.toolCall.name': t.tool, 'ai.toolCall.id': `call_${t.offsetMs}`, 'ai.toolCall.args': JSON.stringify(t.args) }
      : {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': t.tool,
          'gen_ai.tool.call.id': `call_${t.offsetMs}`,
          'gen_ai.tool.call.arguments': JSON.stringify(t.args),
          'gen_ai.agent.name': 'QA_Agent',
          'gen_ai.usage.input_tokens': 12,
          'gen_ai.usage.output_tokens': 3,
        };
    if (task) attributes['tool_audit.task_id'] = task;
    if (t.result !== undefined) attributes[t.aiSdk ? 'ai.toolCall.result' : 'gen_ai.tool.call.result'] = t.result;
    if (t.errorType) attributes['error.type'] = t.errorType;
    if (t.cost !== undefined) attributes['tool_audit.cost_usd'] = t.cost;
    const span = tracer.startSpan(t.aiSdk ? 'ai.toolCall' : `execute_tool ${t.tool}`, { startTime: T0 + t.offsetMs, attributes }, ctx);
    if (t.errorType) span.setStatus({ code: SpanStatusCode.ERROR, message: `${t.tool} failed: ${t.errorType}` });
    span.end(T0 + t.offsetMs + t.durationMs);
  }
  agent.end(T0 + 10_000);
}

function record(run: (tracer: Tracer) => void): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'kernel', 'service.instance.id': 'kernel-7' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  run(provider.getTracer('agent-framework', '1.0.0'));
  return memory.getFinishedSpans();
}

const exportWith = (exporter: SpanExporter, spans: ReadableSpan[]) =>
  new Promise<number>((resolve) => exporter.export(spans, (r) => resolve(r.code)));

const hex = (s: ReadableSpan) => s.spanContext().traceId + s.spanContext().spanId;
const ms = (t: [number, number]) => t[0] * 1000 + Math.floor(t[1] / 1e6);

interface InvRow {
  call_id: string; task_id: string; tool_id: string; agent_id: string; orchestrator: string; instance_id: string; args: string; args_hash: string;
  status: string; duration_ms: number; error: string | null; cost_usd: number | null; tokens_used: string | null; created_at: string;
}

describe('POST /v1/traces with the OpenTelemetry JS SDK', () => {
  const task = `otlp-task-${Date.now()}`;
  const tools: ToolSpec[] = [
    { tool: 'search_web', args: { query: 'Zürich café 🚀', top_k: 10, ratio: 1.5 }, result: '{"results":[{"url":"https://a.example"}]}', offsetMs: 10, durationMs: 420, cost: 0.002 },
    { tool: 'fetch_url', args: { url: 'https://a.example' }, result: '<html>hi</html>', offsetMs: 500, durationMs: 1200 },
    { tool: 'run_python', args: { code: 'print(1)' }, offsetMs: 1800, durationMs: 30_000, errorType: 'timeout' },
    { tool: 'search_web', args: { query: 'again' }, offsetMs: 31_900, durationMs: 15, errorType: 'RateLimitError' },
    { tool: 'cms_createPage', args: { title: 'About' }, result: '{"success":true}', offsetMs: 32_000, durationMs: 80, aiSdk: true },
  ];
  let spans: ReadableSpan[];

  it('stores each exported tool span once (protobuf, gzip), its model turn once, ignores other spans, and re-export adds nothing', async () => {
    spans = record((tracer) => agentRun(tracer, task, tools));
    const exporter = new ProtoExporter({ url, headers: { authorization: `Bearer ${KEY}` }, compression: CompressionAlgorithm.GZIP });
    expect(await exportWith(exporter, spans)).toBe(0);
    const toolSpans = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool' || s.attributes['ai.operationId'] === 'ai.toolCall');
    expect(toolSpans).toHaveLength(5);

    const stored = await rows<InvRow>(ch, 'SELECT *, args_hash FROM {db:Identifier}.tool_invocations WHERE task_id = {t:String} ORDER BY created_at', { db, t: task });
    expect(stored).toHaveLength(5);
    for (const [i, s] of toolSpans.entries()) {
      const spec = tools[i]!;
      const row = stored.find((r) => r.call_id === uuidv5(hex(s), OTLP_ID_NAMESPACE));
      expect(row, spec.tool).toBeDefined();
      expect(row!.tool_id).toBe(spec.tool);
      expect(row!.args).toBe(pythonCanonical(spec.args));
      expect(row!.args_hash).toBe(sha(pythonCanonical(spec.args)));
      expect(row!.duration_ms).toBe(ms(s.endTime) - ms(s.startTime));
      expect(new Date(`${row!.created_at}Z`).getTime()).toBe(ms(s.endTime));
      expect(row!.orchestrator).toBe('kernel');
      expect(row!.instance_id).toBe('kernel-7');
      expect(row!.agent_id).toBe(spec.aiSdk ? 'kernel' : 'QA_Agent');
      expect(row!.status).toBe(spec.errorType === 'timeout' ? 'timeout' : spec.errorType ? 'rate_limited' : 'success');
      expect(row!.error).toBe(spec.errorType ? `${spec.tool} failed: ${spec.errorType}` : null);
      expect(row!.cost_usd).toBe(spec.cost ?? null);
      if (!spec.aiSdk) expect(JSON.parse(row!.tokens_used!)).toEqual({ input_tokens: 12, output_tokens: 3 });
    }
    const outputs = await rows<{ call_id: string; content_type: string; content_hash: string }>(
      ch, 'SELECT call_id, content_type, content_hash FROM {db:Identifier}.tool_outputs WHERE call_id IN {ids:Array(UUID)}', { db, ids: stored.map((r) => r.call_id) });
    expect(outputs.map((o) => o.content_type).sort()).toEqual(['json', 'json', 'text']);
    for (const o of outputs) {
      const spec = tools[toolSpans.findIndex((s) => uuidv5(hex(s), OTLP_ID_NAMESPACE) === o.call_id)]!;
      expect(o.content_hash).toBe(sha(spec.result!));
    }

    // The same spans again, and again through the JSON exporter: redeliveries, no new rows.
    expect(await exportWith(exporter, spans)).toBe(0);
    expect(await exportWith(new JsonExporter({ url, headers: { authorization: `Bearer ${KEY}` } }), spans)).toBe(0);
    expect(await count(ch, db, 'tool_invocations', `task_id = '${task}'`)).toBe(5);
    expect(await count(ch, db, 'tool_outputs', `call_id IN (${stored.map((r) => `'${r.call_id}'`).join(',')})`)).toBe(3);
    expect(await count(ch, db, 'quarantine')).toBe(0);
    // The agent span is an agent run and the chat span a model turn, each stored once in three exports.
    const agent = spans.find((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent')!;
    const runs = await rows<{ task_id: string; agent_id: string; name: string; duration_ms: string; parent_span_id: string }>(
      ch,
      'SELECT task_id, agent_id, name, duration_ms, parent_span_id FROM {db:Identifier}.agent_runs WHERE span_id = {s:String}',
      { db, s: agent.spanContext().spanId },
    );
    expect(runs.map((r) => ({ ...r, duration_ms: Number(r.duration_ms) }))).toEqual([{ task_id: agent.spanContext().traceId, agent_id: 'QA_Agent', name: 'invoke_agent QA_Agent', duration_ms: 10_000, parent_span_id: '' }]);
    expect(metrics.value('tool_audit_otlp_spans_total', { outcome: 'ignored' })).toBe(0);
    // The chat span carries no task attribute: its task is its trace.
    const chat = spans.find((s) => s.attributes['gen_ai.operation.name'] === 'chat')!;
    const turns = await rows<{ task_id: string; model: string; input_tokens: string | null; output_tokens: string | null; duration_ms: string }>(
      ch,
      'SELECT task_id, model, input_tokens, output_tokens, duration_ms FROM {db:Identifier}.model_turns WHERE span_id = {s:String}',
      { db, s: chat.spanContext().spanId },
    );
    expect(turns.map((t) => ({ ...t, input_tokens: Number(t.input_tokens), duration_ms: Number(t.duration_ms) }))).toEqual([{ task_id: chat.spanContext().traceId, model: 'unknown', input_tokens: 900, output_tokens: null, duration_ms: 4 }]);
  });

  it('JSON exporter: a run without a task id lands under its trace id', async () => {
    const run = record((tracer) => agentRun(tracer, undefined, [{ tool: 'search_web', args: { q: 'x', n: [1, 2, { z: null }] }, result: 'plain text', offsetMs: 10, durationMs: 5 }]));
    expect(await exportWith(new JsonExporter({ url, headers: { authorization: `Bearer ${KEY}` } }), run)).toBe(0);
    const traceId = run[0]!.spanContext().traceId;
    const stored = await rows<InvRow>(ch, 'SELECT *, args_hash FROM {db:Identifier}.tool_invocations WHERE task_id = {t:String}', { db, t: traceId });
    expect(stored).toHaveLength(1);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(stored[0]!.args).toBe(pythonCanonical({ q: 'x', n: [1, 2, { z: null }] }));
  });

  it('quarantines a tool span that cannot be mapped, answers partial success with the count, in both encodings', async () => {
    const bad = record((tracer) => agentRun(tracer, `${task}-bad`, [{ tool: 'search_web', args: [1, 2], offsetMs: 10, durationMs: 5 }, { tool: 'ok_tool', args: {}, offsetMs: 20, durationMs: 5 }]));
    const proto = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${KEY}` }, body: ProtobufTraceSerializer.serializeRequest(bad) as Uint8Array<ArrayBuffer> });
    expect(proto.status).toBe(200);
    expect(proto.headers.get('content-type')).toBe('application/x-protobuf');
    const decoded = ProtobufTraceSerializer.deserializeResponse(new Uint8Array(await proto.arrayBuffer()));
    expect(Number(decoded.partialSuccess?.rejectedSpans)).toBe(1);
    expect(decoded.partialSuccess?.errorMessage).toContain('otlp_unmappable');

    const json = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: JsonTraceSerializer.serializeRequest(bad) as Uint8Array<ArrayBuffer> });
    expect(json.status).toBe(200);
    expect(await json.json()).toMatchObject({ partialSuccess: { rejectedSpans: 1 } });

    const q = await rows<{ reason_code: string; reason: string; raw: string; ids: string[] }>(ch, 'SELECT reason_code, reason, raw, ids FROM {db:Identifier}.quarantine', { db });
    expect(q).toHaveLength(2);
    const badSpan = bad.find((s) => s.attributes['gen_ai.tool.name'] === 'search_web')!;
    for (const r of q) {
      expect(r.reason_code).toBe('otlp_unmappable');
      expect(r.reason).toContain('not a JSON object');
      expect(r.ids).toEqual([uuidv5(hex(badSpan), OTLP_ID_NAMESPACE)]);
      const record = JSON.parse(r.raw) as { span: { spanId: string; attributes: unknown[] } };
      expect(record.span.spanId).toBe(badSpan.spanContext().spanId);
    }
    expect(q.some((r) => 'span_protobuf' in JSON.parse(r.raw))).toBe(true);
    expect(await count(ch, db, 'tool_invocations', `task_id = '${task}-bad'`)).toBe(1);
  });

  it('answers 401 without a key, 400 (google.rpc.Status) for a body that is not a request, 415 for other media', async () => {
    expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: new Uint8Array([1]) })).status).toBe(401);
    const garbage = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${KEY}` }, body: new Uint8Array([0x0a, 0xff, 0xff]) });
    expect(garbage.status).toBe(400);
    const badJson = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz","spanId":"00"}]}]}]}' });
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toMatchObject({ code: 3 });
    expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain', authorization: `Bearer ${KEY}` }, body: 'x' })).status).toBe(415);
  });
});
