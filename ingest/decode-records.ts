/**
 * Decoders of the packets that are records beside the calls: a dependency (I6), an optimization
 * hint (a window, a bundle of ≥ 2 tools), a model turn and an agent run (I3), each redacted where
 * free text may hold a secret. Pure; decode-packet.ts dispatches to them.
 */
import { timestampMs } from '../schemas/common.ts';
import { tableCost } from '../schemas/model-prices.ts';
import type { AgentRunPacket, ModelTurnPacket, OptimizationHintPacket, ToolDependencyPacket } from '../schemas/packets.ts';
import type { Redactor } from '../schemas/redaction-policy.ts';
import { chCreatedAt, fingerprint, reject } from './decode-common.ts';
import type { DecodeResult } from './rows.ts';

export function decodeDependency(packet: ToolDependencyPacket, source: string, redactor: Redactor | undefined): DecodeResult {
  const d = packet.dependency;
  const pre = d.preceding_call_id.toLowerCase();
  const suc = d.succeeding_call_id.toLowerCase();
  const ids = [pre, suc];
  if (pre === suc) return reject('I6_dependency', 'preceding_call_id equals succeeding_call_id (I6)', 'tool_dependency', ids);
  if (d.time_delta_ms <= 0) return reject('I6_dependency', `time_delta_ms is ${d.time_delta_ms}, must be > 0 (I6)`, 'tool_dependency', ids);
  const row = {
    task_id: d.task_id,
    preceding_call_id: pre,
    succeeding_call_id: suc,
    preceding_tool_id: d.preceding_tool_id,
    succeeding_tool_id: d.succeeding_tool_id,
    time_delta_ms: d.time_delta_ms,
    // Free text naming what passed from one call to the next: a token handed on is as secret here.
    data_flow: d.data_flow == null ? null : redactor ? redactor.text(d.data_flow) : d.data_flow,
    origin: 'emitted' as const,
    fingerprint: '',
    source,
  };
  row.fingerprint = fingerprint('dependency', row);
  return { ok: true, value: { kind: 'dependency', key: `${pre}>${suc}`, row } };
}

/** A hint's rules beyond its schema: a window that is not empty; a bundle is a sequence of ≥ 2 tools. */
export function decodeHint(packet: OptimizationHintPacket, source: string, redactor: Redactor | undefined): DecodeResult {
  const h = packet.hint;
  const id = h.hint_id.toLowerCase();
  const from = chCreatedAt(h.window_from);
  const to = chCreatedAt(h.window_to);
  if (timestampMs(h.window_from) >= timestampMs(h.window_to)) {
    return reject('hint_window', `window_from ${h.window_from} is not before window_to ${h.window_to}`, 'optimization_hint', [id]);
  }
  if (h.kind === 'bundle_candidate' && h.tool_ids.length < 2) {
    return reject('hint_tools', `a bundle_candidate names a sequence of at least 2 tools; got ${h.tool_ids.length}`, 'optimization_hint', [id]);
  }
  const row = {
    hint_id: id,
    kind: h.kind,
    tool_ids: h.tool_ids,
    task_ids_sample: h.task_ids_sample,
    // Free JSON from the producer (calls, args it saw): redacted as a value, like a JSON content.
    evidence: JSON.stringify(redactor ? redactor.json(h.evidence).value : h.evidence),
    estimated_savings_ms: h.estimated_savings_ms,
    estimated_savings_usd: h.estimated_savings_usd,
    window_from: from,
    window_to: to,
    created_at: chCreatedAt(h.created_at),
    origin: 'producer' as const,
    fingerprint: '',
    source,
  };
  row.fingerprint = fingerprint('hint', row);
  return { ok: true, value: { kind: 'hint', key: id, row } };
}

export function decodeTurn(packet: ModelTurnPacket, source: string, redactor: Redactor | undefined): DecodeResult {
  const t = packet.turn;
  const id = t.turn_id.toLowerCase();
  if (t.status === 'success' && t.error !== null) return reject('I3_error_on_success', 'a turn whose status is success has no error (I3)', 'model_turn', [id]);
  const row = {
    turn_id: id,
    task_id: t.task_id,
    agent_id: t.agent_id,
    model: t.model,
    provider: t.provider,
    input_tokens: t.input_tokens,
    output_tokens: t.output_tokens,
    cached_input_tokens: t.cached_input_tokens,
    cost_usd: t.cost_usd,
    cost_source: t.cost_source,
    duration_ms: t.duration_ms,
    status: t.status,
    // A provider's error can quote the request (a key in a header): redacted like a call's.
    error: t.error === null || !redactor ? t.error : redactor.text(t.error),
    requested_tool_calls: JSON.stringify(t.requested_tool_calls),
    trace_id: t.trace_id ?? '',
    span_id: t.span_id ?? '',
    created_at: chCreatedAt(t.created_at),
    fingerprint: '',
    source,
    // The text of a model's messages holds what the agent was given (keys in a prompt): redacted.
    ...(t.messages == null ? {} : { messages: redactor ? redactor.text(t.messages) : t.messages }),
  };
  row.fingerprint = fingerprint('turn', row);
  // Priced after the fingerprint: the same turn sent again after the table changed is still a
  // duplicate, stored once at the price of its first arrival.
  if (row.cost_usd === null) {
    const cost = tableCost(row.model, { input: row.input_tokens, output: row.output_tokens, cachedInput: row.cached_input_tokens });
    if (cost !== null) Object.assign(row, { cost_usd: cost, cost_source: 'price_table' });
  }
  return { ok: true, value: { kind: 'turn', key: id, row } };
}

export function decodeRun(packet: AgentRunPacket, source: string, redactor: Redactor | undefined): DecodeResult {
  const t = packet.run;
  const id = t.run_id.toLowerCase();
  if (t.status === 'success' && t.error !== null) return reject('I3_error_on_success', 'a run whose status is success has no error (I3)', 'agent_run', [id]);
  const row = {
    run_id: id,
    task_id: t.task_id,
    agent_id: t.agent_id,
    // A run's name can be made of its input (a framework naming the run after the request).
    name: redactor ? redactor.text(t.name) : t.name,
    duration_ms: t.duration_ms,
    status: t.status,
    // An agent's error can quote what it was given (a key in a prompt): redacted like a call's.
    error: t.error === null || !redactor ? t.error : redactor.text(t.error),
    trace_id: t.trace_id ?? '',
    span_id: t.span_id ?? '',
    parent_span_id: t.parent_span_id ?? '',
    created_at: chCreatedAt(t.created_at),
    fingerprint: '',
    source,
  };
  row.fingerprint = fingerprint('run', row);
  return { ok: true, value: { kind: 'run', key: id, row } };
}
