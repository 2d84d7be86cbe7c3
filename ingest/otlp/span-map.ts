/**
 * A tool span → the packets of SPEC §1. Pure and deterministic: the same span (and resource)
 * always gives byte-identical packets, so a re-exported span is a redelivery (I1 duplicate),
 * never a new call or a conflicting one. Only the span's own attributes, kind and parent's id and
 * its resource are read — never the parent span, which a later export may batch elsewhere.
 *
 * Recognised spans (anything else is ignored): the tool spans of the dialects of span-dialects.ts —
 * OTel GenAI, OTel MCP, the Vercel AI SDK, OpenInference, OpenLLMetry — and the model spans of
 * turn-dialects.ts, each a model_turn packet, and the agent spans of agent-dialects.ts, each an
 * agent_run packet (those two mapped in span-records.ts; what all three read alike in span-common.ts).
 */
import { canonicalArgs, type JsonValue } from '../../schemas/canonical-json.ts';
import { approvalSchema, type Approval } from '../../schemas/tool-invocation.ts';
import { describeContent, sha256Hex, uuidV5 } from '../../schemas/hashing.ts';
import { parseLossless } from '../../schemas/lossless-json.ts';
import { MAX_NAME_LENGTH, ORCHESTRATORS, type Orchestrator } from '../../schemas/vocabulary.ts';
import type { AttrValue, OtlpSpan, SpanFilter } from './otlp-decode.ts';
import { isMcpCall, TOOL_SPAN_MARKERS, toolFields } from './span-dialects.ts';
import { TURN_SPAN_MARKERS, turnFields } from './turn-dialects.ts';
import { RUN_SPAN_MARKERS, runFields } from './agent-dialects.ts';
import { agentOf, costOf, firstName, isName, NAMESPACE_BYTES, statusOf, taskOf, unmappableSpan, type SpanMapOptions, type SpanMapping } from './span-common.ts';
import { mapRun, mapTurn } from './span-records.ts';

export { OTLP_ID_NAMESPACE, statusOf, type SpanMapOptions, type SpanMapping } from './span-common.ts';

/** The span attribute (number ≥ 0) read as cost_usd; OpenTelemetry has no cost convention yet. */
export const COST_ATTRIBUTE = 'tool_audit.cost_usd';
/** Span attributes of a call's human approval (invocation.approval): approved_by and approved_at together, reference optional. */
export const APPROVAL_ATTRIBUTES = { by: 'tool_audit.approval.approved_by', at: 'tool_audit.approval.approved_at', reference: 'tool_audit.approval.reference' } as const;
/** A resource attribute that names the orchestrator outright. */
export const ORCHESTRATOR_ATTRIBUTE = 'tool_audit.orchestrator';

/**
 * The spans mapSpan may map: those carrying an attribute a dialect marks its tool or model spans
 * with, or named as the AI SDK names them — each dialect module's own list. Every other span is
 * ignored by mapSpan, so decoding may skip it (an agent's trace is mostly HTTP, chain and
 * framework spans).
 */
export const MAPPABLE_SPANS: SpanFilter = {
  keys: new Set([...TOOL_SPAN_MARKERS.keys, ...TURN_SPAN_MARKERS.keys, ...RUN_SPAN_MARKERS.keys]),
  namePrefixes: [...new Set([...TOOL_SPAN_MARKERS.namePrefixes, ...TURN_SPAN_MARKERS.namePrefixes, ...RUN_SPAN_MARKERS.namePrefixes])],
};

/** Maps one span. Never throws for bad input: what cannot be mapped says why. */
export function mapSpan(span: OtlpSpan, opts: SpanMapOptions): SpanMapping {
  const fields = toolFields(span);
  if (!fields) {
    const turn = turnFields(span);
    if (turn) return mapTurn(span, turn, opts);
    const run = runFields(span);
    return run ? mapRun(span, run, opts) : { kind: 'ignored' };
  }
  if (fields.mcp && !isMcpCall(span, fields.mcp, opts.mcpCallSide ?? 'client')) return { kind: 'ignored' };
  const callId = uuidV5(span.traceId + span.spanId, NAMESPACE_BYTES);

  const toolId = fields.tool;
  if (!isName(toolId)) return unmappableSpan(span, callId, `tool name missing or not a string of 1 to ${MAX_NAME_LENGTH} characters`);
  const argsText = argsJson(fields.args);
  if (argsText === undefined) return unmappableSpan(span, callId, 'tool call arguments are not a JSON object');
  if (span.startNs === 0n) return unmappableSpan(span, callId, 'span has no start time');
  const endNs = span.endNs === 0n ? span.startNs : span.endNs;

  const task = taskOf(span, opts);
  if (!isName(task)) return unmappableSpan(span, callId, `task id (${opts.taskIdAttribute}) longer than ${MAX_NAME_LENGTH} characters`);
  const agentId = agentOf(span);
  const orchestrator = orchestratorOf(span.resource, opts.defaultOrchestrator);
  const instanceId = firstName(span.resource['service.instance.id'], span.resource['service.name']) ?? orchestrator;
  const approval = approvalOf(span.attributes);
  if (approval === 'malformed') {
    return unmappableSpan(span, callId, `${APPROVAL_ATTRIBUTES.by} (a name) and ${APPROVAL_ATTRIBUTES.at} (an ISO-8601 timestamp with an offset) go together; ${APPROVAL_ATTRIBUTES.reference} is a non-empty string`);
  }

  const { status, error, errorType } = statusOf(span);
  const summary: Record<string, unknown> = { otel: { trace_id: span.traceId, span_id: span.spanId, span_name: span.name } };
  if (isName(fields.toolCallId)) summary.tool_call_id = fields.toolCallId;
  if (fields.mcp) summary.mcp = { side: fields.mcp.side, ...(fields.mcp.requestId ? { request_id: fields.mcp.requestId } : {}), ...(fields.mcp.sessionId ? { session_id: fields.mcp.sessionId } : {}) };
  if (errorType) summary.error_type = errorType;
  const createdAt = new Date(Number(endNs / 1_000_000n)).toISOString();
  // Args keep their number literals (a Python 1.0 stays 1.0), so the hash is of what was sent.
  const argsHash = sha256Hex(canonicalArgs(parseLossless(argsText) as JsonValue));
  const invocation = {
    call_id: callId,
    task_id: task,
    tool_id: toolId,
    agent_id: agentId,
    orchestrator,
    instance_id: instanceId,
    args_hash: argsHash,
    status,
    duration_ms: Number((endNs > span.startNs ? endNs - span.startNs : 0n) / 1_000_000n),
    result_summary: summary,
    error,
    cost_usd: costOf(span.attributes[COST_ATTRIBUTE]),
    tokens_used: tokensOf(span.attributes),
    created_at: createdAt,
    ...(approval ? { approval } : {}),
  };
  // The args go in as their own text, spliced after the other fields (their literals intact).
  const call = `{"type":"tool_call","call_id":"${callId}","invocation":${JSON.stringify(invocation).slice(0, -1)},"args":${argsText}}}`;
  const packets = [call];
  const content = status === 'success' ? contentOf(fields.result) : undefined;
  if (content) {
    const output = { output_id: uuidV5(`${callId}:output`, NAMESPACE_BYTES), call_id: callId, tool_id: toolId, content_type: content.type, ...describeContent(content.text), created_at: createdAt };
    packets.push(JSON.stringify({ type: 'output_artifact', output, content: content.text }));
  }
  return { kind: 'tool', callId, packets };
}

/** JSON text of the arguments when they are an object: a JSON string of one, or a structured (kvlist) value. */
function argsJson(v: AttrValue | undefined): string | undefined {
  if (v === undefined || v === null) return '{}';
  if (typeof v === 'string') {
    const text = v.trim();
    // The lossless reader is the one ingest re-reads args with (SPEC §2 number literals).
    return text.startsWith('{') && parseLossless(text) !== undefined ? text : undefined;
  }
  return typeof v === 'object' && !Array.isArray(v) ? JSON.stringify(v) : undefined;
}

function contentOf(v: AttrValue | undefined): { text: string; type: 'json' | 'text' } | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') return { text: JSON.stringify(v), type: 'json' };
  const first = v.trimStart()[0];
  if (first === '{' || first === '[') {
    try {
      JSON.parse(v);
      return { text: v, type: 'json' };
    } catch {
      // Looks like JSON but is not: it is text.
    }
  }
  return { text: v, type: 'text' };
}

function orchestratorOf(resource: Record<string, AttrValue>, fallback: Orchestrator): Orchestrator {
  for (const v of [resource[ORCHESTRATOR_ATTRIBUTE], resource['service.name']]) {
    const s = typeof v === 'string' ? v.toLowerCase() : undefined;
    if ((ORCHESTRATORS as readonly unknown[]).includes(s)) return s as Orchestrator;
  }
  return fallback;
}

/** Every integer gen_ai.usage.* attribute (input_tokens, output_tokens, …) under its name without the prefix. */
function tokensOf(a: Record<string, AttrValue>): Record<string, number> | null {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(a)) {
    if (k.startsWith('gen_ai.usage.') && Number.isSafeInteger(v) && (v as number) >= 0) out[k.slice('gen_ai.usage.'.length)] = v as number;
  }
  return Object.keys(out).length ? out : null;
}

/** The span's approval, none, or 'malformed' (the span is then unmappable: its call is quarantined, not stored without it). */
function approvalOf(a: OtlpSpan['attributes']): Approval | undefined | 'malformed' {
  const [by, at, reference] = [a[APPROVAL_ATTRIBUTES.by], a[APPROVAL_ATTRIBUTES.at], a[APPROVAL_ATTRIBUTES.reference]];
  if (by === undefined && at === undefined && reference === undefined) return undefined;
  // Judged by the contract itself, as the packet will be.
  const r = approvalSchema.safeParse({ approved_by: by, approved_at: at, ...(reference === undefined ? {} : { reference }) });
  return r.success ? r.data : 'malformed';
}

