/**
 * Pure builders of the packets an invocation produces (SPEC §1). The hot path only takes
 * snapshots (JSON text of args and content); hashing, ids and envelopes are built here, in
 * the background flusher.
 */
import type { JsonValue } from '../schemas/canonical-json.ts';
import type { Redactor } from '../schemas/redaction-policy.ts';
import { argsHash, describeContent, sha256Hex } from '../schemas/hashing.ts';
import { MAX_APPROVAL_REFERENCE, MAX_NAME_LENGTH, type ContentType, type Orchestrator, type ToolStatus } from '../schemas/vocabulary.ts';

/** A tool's input arguments: a JSON object. */
export type ToolArgs = Record<string, unknown>;

/** Content of a successful call, already serialized. */
export interface RecordedContent {
  /** The content as sent: the tool's string, or JSON.stringify of its value. */
  text: string;
  contentType: ContentType;
  /** text is JSON.stringify output of an object or array: it goes into the packet as that value, not as a string. */
  embed: boolean;
}

/** How a call ended, in the shape the packets need. */
export interface Outcome {
  status: ToolStatus;
  /** null if and only if status is success (I3, I4). */
  error: string | null;
  /** JSON text of an object. */
  resultSummaryJson: string;
  costUsd: number | null;
  tokensUsed: Record<string, number> | null;
  /** Present only on success with non-empty content. */
  content: RecordedContent | undefined;
}

/** A human approval as it goes on the wire (the contract's invocation.approval). */
export interface WireApproval {
  approved_by: string;
  /** ISO-8601 in UTC. */
  approved_at: string;
  reference?: string;
}

/** A human approval of a call, as a caller gives it to invoke or recordCall. */
export interface CallApproval {
  /** Who approved (a person or a reviewer id). */
  approvedBy: string;
  /** When: a Date, epoch milliseconds or an ISO-8601 string with an offset. */
  approvedAt: Date | number | string;
  /** Where the approval is recorded (a ticket URL, a change id). */
  reference?: string;
}

/** The wire form of an approval; throws a TypeError naming what is wrong. */
export function wireApproval(a: CallApproval): WireApproval {
  if (typeof a.approvedBy !== 'string' || a.approvedBy.length === 0 || a.approvedBy.length > MAX_NAME_LENGTH) {
    throw new TypeError(`approval.approvedBy must be a non-empty string of at most ${MAX_NAME_LENGTH} characters`);
  }
  const at = a.approvedAt instanceof Date ? a.approvedAt.getTime() : typeof a.approvedAt === 'number' ? a.approvedAt : Date.parse(a.approvedAt);
  if (!Number.isFinite(at) || at < 0 || (typeof a.approvedAt === 'string' && !/(Z|[+-]\d\d:\d\d)$/i.test(a.approvedAt))) {
    throw new TypeError('approval.approvedAt must be a Date, epoch milliseconds or an ISO-8601 timestamp with an offset');
  }
  if (a.reference !== undefined && (typeof a.reference !== 'string' || a.reference.length === 0 || a.reference.length > MAX_APPROVAL_REFERENCE)) {
    throw new TypeError(`approval.reference must be a non-empty string of at most ${MAX_APPROVAL_REFERENCE} characters`);
  }
  return { approved_by: a.approvedBy, approved_at: new Date(at).toISOString(), ...(a.reference === undefined ? {} : { reference: a.reference }) };
}

/** Everything known about one finished invocation. */
export interface InvocationRecord {
  callId: string;
  taskId: string | null;
  toolId: string;
  agentId: string;
  orchestrator: Orchestrator;
  instanceId: string;
  /** JSON text of the args object, taken when invoke was called. */
  argsJson: string;
  /**
   * The args already written as `json.dumps(args, sort_keys=True)` (a relay that kept the
   * producer's number literals): sent and hashed as is, argsJson then unused.
   */
  argsCanonical?: string;
  /** Fractional milliseconds (performance.now difference); rounded when built. */
  durationMs: number;
  /** Epoch milliseconds when the call ended; the packets' created_at. */
  createdAtMs: number;
  outcome: Outcome;
  /** The human approval the call ran under, if it needed one. */
  approval?: WireApproval;
}

/**
 * The invocation of a tool_call packet as built here. Written out rather than taken from the
 * zod contract so that the emitter package does not need zod; test/unit/emit/contract-types
 * checks at compile time that it is assignable to that contract's ToolInvocation.
 */
export interface WireInvocation {
  call_id: string;
  task_id: string | null;
  tool_id: string;
  agent_id: string;
  orchestrator: Orchestrator;
  instance_id: string;
  args: Record<string, JsonValue>;
  args_hash: string;
  status: ToolStatus;
  duration_ms: number;
  result_summary: Record<string, unknown>;
  error: string | null;
  cost_usd: number | null;
  tokens_used: Record<string, number> | null;
  created_at: string;
  approval?: WireApproval;
}

// The schema caps error at 65 536 characters; a longer one would get the whole call quarantined.
const MAX_ERROR_CHARS = 65_536;

/** The Kafka key: task_id keeps a task's packets in one partition, in order; else call_id. */
export function packetKey(rec: Pick<InvocationRecord, 'taskId' | 'callId'>): string {
  return rec.taskId ?? rec.callId;
}

/** Serializes the tool_call packet of a record. */
export function encodeToolCall(rec: InvocationRecord, redactor?: Redactor): string {
  const o = rec.outcome;
  let canonical = rec.argsCanonical;
  let args = (canonical === undefined ? JSON.parse(rec.argsJson) : {}) as Record<string, JsonValue>;
  let summary = JSON.parse(o.resultSummaryJson) as Record<string, unknown>;
  let error = o.status === 'success' ? null : clampError(o.error || o.status);
  if (redactor) {
    // Args kept as the producer wrote them (canonical) are redacted as values: their number
    // literals are rewritten only when a secret was found.
    const r = redactor.call(rec.toolId, { args: canonical === undefined ? args : (JSON.parse(canonical) as unknown), result_summary: summary }, { args: canonical ?? rec.argsJson, summary: o.resultSummaryJson });
    if (r.changed) {
      args = r.args as Record<string, JsonValue>;
      summary = r.result_summary as Record<string, unknown>;
      canonical = undefined;
    }
    if (error !== null) error = redactor.text(error);
  }
  const invocation: WireInvocation = {
    call_id: rec.callId,
    task_id: rec.taskId,
    tool_id: rec.toolId,
    agent_id: rec.agentId,
    orchestrator: rec.orchestrator,
    instance_id: rec.instanceId,
    args,
    // Hash of exactly what is sent: ingest recomputes it from the parsed packet (I5).
    args_hash: canonical === undefined ? argsHash(args) : sha256Hex(canonical),
    status: o.status,
    duration_ms: Math.max(0, Math.round(rec.durationMs)),
    result_summary: summary,
    error,
    cost_usd: o.costUsd,
    tokens_used: o.tokensUsed,
    created_at: new Date(rec.createdAtMs).toISOString(),
    ...(rec.approval ? { approval: rec.approval } : {}),
  };
  const packet = JSON.stringify({ type: 'tool_call', call_id: rec.callId, invocation });
  // The only unescaped `"args":{}` is the member itself: inside a string every quote is escaped.
  return canonical === undefined ? packet : packet.replace('"args":{}', () => `"args":${canonical}`);
}

/** Serializes the output_artifact packet of a successful record with content, else undefined. */
export function encodeOutputArtifact(rec: InvocationRecord, outputId: string, redactor?: Redactor): string | undefined {
  let c = rec.outcome.content;
  if (rec.outcome.status !== 'success' || !c) return undefined;
  // JSON content stays JSON: redacted as a value, rewritten only when a secret was found.
  if (redactor) c = { ...c, text: c.embed ? redactor.jsonText(c.text).text : redactor.text(c.text) };
  const output = {
    output_id: outputId,
    call_id: rec.callId,
    tool_id: rec.toolId,
    content_type: c.contentType,
    ...describeContent(c.text),
    created_at: new Date(rec.createdAtMs).toISOString(),
  };
  // Spliced rather than re-parsed: text is already valid JSON, and content can be large.
  const content = c.embed ? c.text : JSON.stringify(c.text);
  return `{"type":"output_artifact","output":${JSON.stringify(output)},"content":${content}}`;
}

/**
 * JSON text of a value, or undefined when it has none (undefined, a function). Never throws:
 * values JSON.stringify refuses (BigInt, cycles, a throwing toJSON) are written with BigInts
 * as strings and repeated objects as "[Circular]", because an audit record must not break
 * the tool call it describes.
 */
export function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    try {
      return JSON.stringify(value, tolerantReplacer());
    } catch (err) {
      return JSON.stringify(`[unserializable: ${err instanceof Error ? err.message : String(err)}]`);
    }
  }
}

function tolerantReplacer(): (key: string, v: unknown) => unknown {
  const seen = new WeakSet<object>();
  return (_key, v) => {
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'object' && v !== null) {
      if (seen.has(v)) return '[Circular]';
      seen.add(v);
    }
    return v;
  };
}

/**
 * JSON text of an object for args / result_summary. Anything that does not serialize to an
 * object (an array, a string from toJSON) is wrapped as `{"value": …}`, since the schema
 * requires an object and a quarantined call is worse than a wrapped one.
 */
export function objectJson(value: unknown): string {
  const text = safeJson(value);
  if (text === undefined || text === 'null') return '{}';
  return text.charCodeAt(0) === 0x7b /* { */ ? text : `{"value":${text}}`;
}

function clampError(message: string): string {
  if (message.length <= MAX_ERROR_CHARS) return message;
  let end = MAX_ERROR_CHARS;
  // Do not cut a surrogate pair in half.
  const c = message.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return message.slice(0, end);
}
