import { describe, expect, it } from 'vitest';
import type { OtlpSpan } from '../../../ingest/otlp/otlp-decode.ts';
import { decodePacket } from '../../../ingest/decode-packet.ts';
import { mapSpan, statusOf } from '../../../ingest/otlp/span-map.ts';

const OPTS = { taskIdAttribute: 'tool_audit.task_id', defaultOrchestrator: 'gateway' as const };

function span(attributes: OtlpSpan['attributes'], over: Partial<OtlpSpan> = {}): OtlpSpan {
  return {
    traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name: 'execute_tool t', kind: 1,
    startNs: 1_763_900_000_000_000_000n, endNs: 1_763_900_000_250_000_000n,
    attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 't', ...attributes },
    status: { code: 0, message: '' }, events: [], resource: {}, scope: { name: '', version: '' }, json: () => ({}), ...over,
  };
}
const decode = (raw: string) => decodePacket({ raw, source: { kind: 'http', requestId: 'r', index: 0 } }, 1 << 20);

describe('mapSpan', () => {
  it('maps statuses from error.type and the span status onto the enum', () => {
    const s = (errorType: string | undefined, code = 2, message = '') =>
      statusOf(span(errorType ? { 'error.type': errorType } : {}, { status: { code, message } })).status;
    expect(s(undefined, 0)).toBe('success');
    expect(s(undefined, 1)).toBe('success');
    expect(s('timeout')).toBe('timeout');
    expect(s('TimeoutError')).toBe('timeout');
    expect(s('rate_limit')).toBe('rate_limited');
    expect(s('429')).toBe('rate_limited');
    expect(s('validation_error')).toBe('invalid_input');
    expect(s('InvalidArgument')).toBe('invalid_input');
    expect(s('ZeroDivisionError')).toBe('error');
    expect(s(undefined, 2, 'deadline exceeded')).toBe('timeout');
    expect(s('_OTHER', 0)).toBe('error');
  });

  it('is deterministic, with defaults for a span that says little, and passes every ingest rule', () => {
    const a = mapSpan(span({ 'gen_ai.tool.call.arguments': '{"x": 1.0, "b": "é"}', 'gen_ai.tool.call.result': 'ok' }), OPTS);
    const b = mapSpan(span({ 'gen_ai.tool.call.arguments': '{"x": 1.0, "b": "é"}', 'gen_ai.tool.call.result': 'ok' }), OPTS);
    expect(a).toEqual(b);
    if (a.kind !== 'tool') throw new Error(a.kind);
    const inv = JSON.parse(a.packets[0]!).invocation;
    expect(inv).toMatchObject({ task_id: '5b8efff798038103d269b633813fc60c', agent_id: 'unknown', orchestrator: 'gateway', instance_id: 'gateway', duration_ms: 250, status: 'success' });
    for (const p of a.packets) expect(decode(p).ok).toBe(true);
  });

  it('carries an approval from tool_audit.approval.* attributes; a malformed one makes the span unmappable (quarantined, not stored without it)', () => {
    const approved = mapSpan(span({ 'tool_audit.approval.approved_by': 'dana', 'tool_audit.approval.approved_at': '2026-11-22T10:00:00+01:00', 'tool_audit.approval.reference': 'CHG-7' }), OPTS);
    if (approved.kind !== 'tool') throw new Error(approved.kind);
    expect(JSON.parse(approved.packets[0]!).invocation.approval).toEqual({ approved_by: 'dana', approved_at: '2026-11-22T10:00:00+01:00', reference: 'CHG-7' });
    const d = decode(approved.packets[0]!);
    expect(d.ok && d.value.kind === 'invocation' && JSON.parse(d.value.row.approval)).toEqual({ approved_by: 'dana', approved_at: '2026-11-22T09:00:00.000Z', reference: 'CHG-7' });
    const none = mapSpan(span({}), OPTS);
    expect(none.kind === 'tool' && 'approval' in JSON.parse(none.packets[0]!).invocation).toBe(false);
    for (const bad of [{ 'tool_audit.approval.approved_by': 'dana' }, { 'tool_audit.approval.approved_at': '2026-11-22T10:00:00Z' }, { 'tool_audit.approval.approved_by': 'dana', 'tool_audit.approval.approved_at': 'yesterday' }, { 'tool_audit.approval.approved_by': 'dana', 'tool_audit.approval.approved_at': '2026-11-22T10:00:00Z', 'tool_audit.approval.reference': 7 }]) {
      expect(mapSpan(span(bad as OtlpSpan['attributes']), OPTS).kind, JSON.stringify(bad)).toBe('unmappable');
    }
  });

  it('ignores spans that are not tool executions and marks unmappable tool spans', () => {
    expect(mapSpan(span({ 'gen_ai.operation.name': 'embeddings' }), OPTS).kind).toBe('ignored');
    expect(mapSpan(span({ 'gen_ai.operation.name': 'invoke_agent' }), OPTS).kind).toBe('run');
    expect(mapSpan(span({ 'gen_ai.operation.name': 'chat' }), OPTS).kind).toBe('turn');
    const bad = mapSpan(span({ 'gen_ai.tool.call.arguments': '"just a string"' }), OPTS);
    expect(bad.kind).toBe('unmappable');
    if (bad.kind !== 'unmappable') return;
    const d = decode(bad.packet);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.error.code).toBe('otlp_unmappable');
    expect(mapSpan(span({ 'gen_ai.tool.name': undefined as never }), OPTS).kind).toBe('unmappable');
  });
});
