import { describe, expect, it } from 'vitest';
import { decodePacket } from '../../../ingest/decode-packet.ts';
import type { OtlpSpan } from '../../../ingest/otlp/otlp-decode.ts';
import { mapSpan } from '../../../ingest/otlp/span-map.ts';

const OPTS = { taskIdAttribute: 'tool_audit.task_id', defaultOrchestrator: 'gateway' as const };
const span = (name: string, attributes: OtlpSpan['attributes'], over: Partial<OtlpSpan> = {}): OtlpSpan => ({
  traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name, kind: 1,
  startNs: 1_763_900_000_000_000_000n, endNs: 1_763_900_002_500_000_000n,
  attributes, status: { code: 0, message: '' }, events: [], resource: { 'service.name': 'kernel' }, scope: { name: '', version: '' }, json: () => ({}), ...over,
});

/** The run a span maps to, after the ingest decoder judged its packet. */
function run(s: OtlpSpan): Record<string, unknown> {
  const m = mapSpan(s, OPTS);
  if (m.kind !== 'run') throw new Error(`not a run: ${m.kind}`);
  const d = decodePacket({ raw: m.packets[0] as string, source: { kind: 'http', requestId: 'r', index: 0 } }, 1 << 20);
  if (!d.ok || d.value.kind !== 'run') throw new Error(JSON.stringify(d));
  return JSON.parse(m.packets[0] as string).run;
}

describe('agent spans → agent_run packets', () => {
  it('reads each dialect\'s agent and name (as the instrumentations write them: pydantic-ai, OpenInference and OpenLLMetry LangChain, the AI SDK)', () => {
    const cases: Array<[OtlpSpan, { agent_id: string; name: string }]> = [
      [span('invoke_agent weather_bot', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'weather_bot', 'gen_ai.agent.call.id': '01a2' }), { agent_id: 'weather_bot', name: 'invoke_agent weather_bot' }],
      [span('support_agent', { 'openinference.span.kind': 'AGENT', 'input.value': 'refund policy' }, { parentSpanId: '00f067aa0ba902b7' }), { agent_id: 'support_agent', name: 'support_agent' }],
      [span('LangGraph', { 'openinference.span.kind': 'CHAIN' }), { agent_id: 'LangGraph', name: 'LangGraph' }],
      [span('support_agent.workflow', { 'traceloop.span.kind': 'workflow', 'traceloop.workflow.name': 'support_agent', 'traceloop.entity.name': 'support_agent', 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support_agent', 'gen_ai.agent.id': '01a224ab-b504' }), { agent_id: 'support_agent', name: 'support_agent' }],
      [span('ai.generateText', { 'ai.operationId': 'ai.generateText', 'ai.telemetry.functionId': 'triage' }), { agent_id: 'triage', name: 'triage' }],
      // Nothing names the agent: the service does.
      [span('ai.streamText', { 'ai.operationId': 'ai.streamText' }), { agent_id: 'kernel', name: 'ai.streamText' }],
      [span('invoke_agent', { 'gen_ai.operation.name': 'invoke_agent' }), { agent_id: 'kernel', name: 'invoke_agent' }],
    ];
    for (const [s, want] of cases) expect(run(s), s.name).toMatchObject(want);
  });

  it('keeps the trace\'s place, times, status; the id is the same on a re-export and differs from the span\'s call or turn id', () => {
    const s = span('invoke_agent a', { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'a', 'tool_audit.task_id': 'T-1', 'error.type': 'TimeoutError' }, { parentSpanId: '00f067aa0ba902b7', status: { code: 2, message: 'gave up' } });
    const r = run(s);
    expect(r).toEqual({
      run_id: r.run_id, task_id: 'T-1', agent_id: 'a', name: 'invoke_agent a', duration_ms: 2500, status: 'error', error: 'gave up',
      trace_id: '5b8efff798038103d269b633813fc60c', span_id: 'eee19b7ec3c1b174', parent_span_id: '00f067aa0ba902b7', created_at: '2025-11-23T12:13:22.500Z',
    });
    expect(run(s).run_id).toBe(r.run_id);
    expect(run({ ...s, spanId: 'eee19b7ec3c1b175' }).run_id).not.toBe(r.run_id);
    expect(run(span('x', { 'openinference.span.kind': 'AGENT' })).parent_span_id).toBeNull();
  });

  it('a CHAIN under another span is no run (LangChain opens one per runnable); a span without a start is quarantined', () => {
    expect(mapSpan(span('RunnableSequence', { 'openinference.span.kind': 'CHAIN' }, { parentSpanId: '00f067aa0ba902b7' }), OPTS).kind).toBe('ignored');
    expect(mapSpan(span('a', { 'gen_ai.operation.name': 'invoke_agent' }, { startNs: 0n }), OPTS).kind).toBe('unmappable');
  });
});
