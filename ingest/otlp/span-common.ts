/**
 * What every span mapping reads the same way (span-map.ts for tool spans, span-records.ts for
 * model and agent spans): the id namespace, the task, agent and status of a span, its cost, and
 * the quarantine record of a span that cannot be a packet. Pure.
 */
import { parse as uuidParse } from 'uuid';
import { MAX_NAME_LENGTH, statusOfCategory, type Orchestrator, type ToolStatus } from '../../schemas/vocabulary.ts';
import type { AttrValue, OtlpSpan } from './otlp-decode.ts';

/**
 * Namespace of call_id = UUIDv5(namespace, trace_id + span_id) (hex, lowercase),
 * output_id = UUIDv5(namespace, call_id + ":output"), turn_id = UUIDv5(namespace, trace_id +
 * span_id + ":turn") and run_id = UUIDv5(namespace, trace_id + span_id + ":run"). Anyone can
 * recompute them.
 */
export const OTLP_ID_NAMESPACE = '6f1b6f2e-9a57-5c1e-8d0a-7c6f746c7370';
/** Parsed once: uuid's v5 parses a namespace given as text on every call. */
export const NAMESPACE_BYTES = uuidParse(OTLP_ID_NAMESPACE);

/** The settings of the mapping (OTLP_* configuration). */
export interface SpanMapOptions {
  /** Span (then resource) attribute holding task_id; without it the trace id is the task. */
  taskIdAttribute: string;
  /** orchestrator when neither tool_audit.orchestrator nor service.name names one. */
  defaultOrchestrator: Orchestrator;
  /** Which side's span of an MCP tools/call is the call (see isMcpCall); `client` when unset. */
  mcpCallSide?: 'client' | 'server';
  /** Whether a model span's message attributes go with its turn (`messages`); off when unset. */
  turnMessages?: boolean;
}

/** What became of one span. */
export type SpanMapping =
  | { kind: 'ignored' }
  | { kind: 'tool'; callId: string; packets: string[] }
  | { kind: 'turn'; turnId: string; packets: string[] }
  | { kind: 'run'; runId: string; packets: string[] }
  | { kind: 'unmappable'; reason: string; packet: string };

/** A span that cannot be a packet, and its quarantine record. */
export function unmappableSpan(span: OtlpSpan, id: string, reason: string): SpanMapping {
  return { kind: 'unmappable', reason, packet: quarantinePacket(span, id, reason) };
}

/** The task of a span: the configured attribute (span, then resource), else the trace. */
export function taskOf(span: OtlpSpan, opts: SpanMapOptions): string {
  return stringAttr(span.attributes[opts.taskIdAttribute]) ?? stringAttr(span.resource[opts.taskIdAttribute]) ?? span.traceId;
}

/** The agent of a span: GenAI's agent name or id (span, then resource), the AI SDK's function id, the service. */
export function agentOf(span: OtlpSpan): string {
  return (
    firstName(
      span.attributes['gen_ai.agent.name'],
      span.attributes['gen_ai.agent.id'],
      span.resource['gen_ai.agent.name'],
      span.resource['gen_ai.agent.id'],
      span.attributes['ai.telemetry.functionId'],
      span.resource['service.name'],
    ) ?? 'unknown'
  );
}

/** The quarantine record of a span that cannot be a packet: always rejected (otlp_unmappable) at ingest. */
function quarantinePacket(span: OtlpSpan, callId: string, reason: string): string {
  return JSON.stringify({
    type: 'otlp_span',
    reason,
    call_id: callId,
    resource: span.resource,
    scope: span.scope,
    span: span.json(),
    ...(span.protobuf ? { span_protobuf: span.protobuf() } : {}),
  });
}

/**
 * success unless the span status is ERROR or error.type is set. The kind comes from error.type
 * (else the exception event's exception.type): tool-smith's categories exactly, then by words —
 * timeout/deadline → timeout; rate limit/429/too many requests/throttled → rate_limited;
 * validation/invalid argument or input/400/422 → invalid_input; anything else → error.
 */
export function statusOf(span: OtlpSpan): { status: ToolStatus; error: string | null; errorType: string | undefined } {
  const exception = span.events.find((e) => e.name === 'exception')?.attributes ?? {};
  const errorType = stringAttr(span.attributes['error.type']);
  if (span.status.code !== 2 && !errorType) return { status: 'success', error: null, errorType: undefined };
  const kind = errorType ?? stringAttr(exception['exception.type']) ?? '';
  const message = span.status.message || stringAttr(exception['exception.message']) || kind || 'error';
  return { status: classify(kind, span.status.message), error: message.slice(0, 65_536), errorType: kind || undefined };
}

function classify(kind: string, message: string): ToolStatus {
  const exact = statusOfCategory(kind);
  if (exact !== 'error') return exact;
  const text = `${kind} ${message}`;
  if (/time[d_ -]?out|deadline/i.test(text)) return 'timeout';
  if (/rate[_ -]?limit|too[_ -]?many[_ -]?requests|\b429\b|resource[_ ]?exhausted|throttl/i.test(text)) return 'rate_limited';
  if (/validation|invalid[_ -]?(input|argument|param)|\b(400|422)\b|bad[_ -]?request/i.test(text)) return 'invalid_input';
  return 'error';
}

/** A cost attribute when it is a number ≥ 0; null otherwise. */
export function costOf(v: AttrValue | undefined): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
}

/** A string attribute (or a finite number, as text); undefined for anything else or ''. */
function stringAttr(v: AttrValue | undefined): string | undefined {
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/** A string of 1 to MAX_NAME_LENGTH characters (an id or a name the contract takes). */
export function isName(v: unknown): v is string {
  return typeof v === 'string' && v.length >= 1 && v.length <= MAX_NAME_LENGTH;
}

/** The first of the values that is a name ({@link isName}). */
export function firstName(...values: Array<AttrValue | undefined>): string | undefined {
  return values.find(isName) as string | undefined;
}
