/**
 * Decode one raw packet and check every per-packet MUST rule of SPEC §3 (I2, I3, I5, I6, I7), and
 * an optimization_hint's (a non-empty window, a bundle of ≥ 2 tools), a model_turn's and an
 * agent_run's (I3).
 * Pure: the cross-packet rule I1 (call_id uniqueness) is the batch writer's job, because it
 * needs what is already stored.
 */
import type { z } from 'zod';
import { canonicalArgs, compareCodePoints, pythonJsonDumps, pythonJsonString, type JsonValue } from '../schemas/canonical-json.ts';
import { timestampMs } from '../schemas/common.ts';
import { contentTypeMismatch } from '../schemas/content-type.ts';
import { contentSample, sha256Hex, utf8ByteLength } from '../schemas/hashing.ts';
import { parseLossless } from '../schemas/lossless-json.ts';
import { tableCost } from '../schemas/model-prices.ts';
import { hasLossyNumber, stringifyLossless } from '../schemas/raw-json.ts';
import {
  packetSchema,
  PACKET_TYPES,
  type AgentRunPacket,
  type ModelTurnPacket,
  type OptimizationHintPacket,
  type OutputArtifactPacket,
  type Packet,
  type PacketType,
  type ToolCallPacket,
  type ToolDependencyPacket,
} from '../schemas/packets.ts';
import { placeholdersIn, type Redactor } from '../schemas/redaction-policy.ts';
import type { ToolInvocation } from '../schemas/tool-invocation.ts';
import { isValidPacket } from './packet-check.ts';
import { redactMessages } from './turn-messages.ts';
import { chTime } from '../platform/clickhouse/statement.ts';
import type { Approval } from '../schemas/tool-invocation.ts';
import { storedFingerprint, type RawEncoding } from './ports.ts';
import { sourceKey, type Accepted, type DecodeResult, type RawPacket, type RejectCode } from './rows.ts';

const reject = (code: RejectCode, message: string, packetType: PacketType | null, ids: string[] = []): DecodeResult => ({
  ok: false,
  error: { code, message, packetType, ids },
});

/** Decodes and checks one packet. Never throws for bad input. */
export function decodePacket(p: RawPacket, maxPacketBytes: number, redactor?: Redactor): DecodeResult {
  // Read once: a transport may produce the text on access (the Kafka worker does).
  return decode(p.raw, p.bytes, sourceKey(p.source), maxPacketBytes, true, p.encoding, redactor);
}

/** decodePacket for a packet given as its text, declared byte size, source key and encoding (decode threads). */
export function decodeText(raw: string, bytes: number | undefined, source: string, maxPacketBytes: number, encoding: RawEncoding = 'utf8', redactor?: Redactor): DecodeResult {
  return decode(raw, bytes, source, maxPacketBytes, true, encoding, redactor);
}

/**
 * decodePacket with the zod-free fast path of packet-check.ts switched on or off. Both give the
 * same result for every input; tests compare them.
 */
export function decodePacketWith(p: RawPacket, maxPacketBytes: number, opts: { fastPath: boolean }): DecodeResult {
  return decode(p.raw, p.bytes, sourceKey(p.source), maxPacketBytes, opts.fastPath, p.encoding);
}

function decode(raw: string, declaredBytes: number | undefined, source: string, maxPacketBytes: number, fastPath: boolean, encoding: RawEncoding = 'utf8', redactor?: Redactor): DecodeResult {
  const r = judge(raw, declaredBytes, source, maxPacketBytes, fastPath, encoding, redactor);
  // A reason may quote what it refused (the schema names unknown keys, a span's mapping its
  // attributes): it is answered, stored in the quarantine and searched, so it goes out redacted.
  if (!r.ok && redactor) r.error.message = redactor.text(r.error.message);
  return r;
}

function judge(raw: string, declaredBytes: number | undefined, source: string, maxPacketBytes: number, fastPath: boolean, encoding: RawEncoding, redactor: Redactor | undefined): DecodeResult {
  const bytes = declaredBytes ?? utf8ByteLength(raw);
  if (bytes > maxPacketBytes) {
    return reject('oversized', `packet is ${bytes} bytes, the limit is ${maxPacketBytes}`, null);
  }
  // JSON exchanged between systems is UTF-8 (RFC 8259 §8.1): bytes that are not are refused as
  // they are, never read with replacement characters (which could then pass every rule).
  if (encoding === 'base64') return reject('invalid_utf8', 'the packet bytes are not valid UTF-8', null);
  if (encoding === 'none') return reject('malformed_json', 'the Kafka record has no value (null)', null);
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    // V8 quotes the text around the error ("{"a": AKIAIOSFOD"...): a piece of a secret, too short
    // for a detector to know. The reason keeps the token and position, never the text itself.
    return reject('malformed_json', `not valid JSON: ${(err as Error).message.replace(/, "[\s\S]*"(?:\.\.\.)? is not valid JSON$/, ' is not valid JSON')}`, null);
  }
  if ((json as { type?: unknown } | null)?.type === 'otlp_span') return unmappableSpan(json as { reason?: unknown; call_id?: unknown });
  let packet: Packet;
  if (fastPath && isValidPacket(json)) {
    packet = json;
  } else {
    const parsed = packetSchema.safeParse(json);
    if (parsed.success) packet = parsed.data;
    else return schemaRejection(json, parsed.error.issues);
  }
  switch (packet.type) {
    case 'tool_call':
      return decodeToolCall(packet, raw, source, redactor);
    case 'output_artifact':
      return decodeOutput(packet, raw, source, redactor);
    case 'tool_dependency':
      return decodeDependency(packet, source, redactor);
    case 'optimization_hint':
      return decodeHint(packet, source, redactor);
    case 'model_turn':
      return decodeTurn(packet, source, redactor);
    case 'agent_run':
      return decodeRun(packet, source, redactor);
  }
}

/**
 * The record POST /v1/traces writes for a tool span it could not map (ingest/otlp/span-map.ts):
 * never a segment row, always quarantined with the mapper's reason and the span's bytes.
 */
function unmappableSpan(json: { reason?: unknown; call_id?: unknown }): DecodeResult {
  const ids = typeof json.call_id === 'string' ? [json.call_id] : [];
  return reject('otlp_unmappable', `OTLP tool span not mapped: ${String(json.reason ?? 'unknown reason')}`, null, ids);
}

function schemaRejection(json: unknown, allIssues: z.ZodError['issues']): DecodeResult {
  const type = (json as { type?: unknown } | null)?.type;
  const packetType = PACKET_TYPES.find((t) => t === type) ?? null;
  const issues = allIssues
    .slice(0, 10)
    .map((i) => `${i.path.join('.') || '(packet)'}: ${i.message}${'keys' in i ? ` (${(i.keys as string[]).join(', ')})` : ''}`);
  return reject('schema', `schema violation (I2): ${issues.join('; ')}`, packetType, idsOf(json));
}

function decodeToolCall(packet: ToolCallPacket, raw: string, source: string, redactor: Redactor | undefined): DecodeResult {
  const inv = packet.invocation;
  const callId = inv.call_id.toLowerCase();
  const ids = [callId];
  if (packet.call_id.toLowerCase() !== callId) {
    return reject('envelope_mismatch', `envelope call_id ${packet.call_id} differs from invocation.call_id ${inv.call_id}`, 'tool_call', ids);
  }
  if (inv.status === 'success' && inv.error != null) {
    return reject('I3_error_on_success', 'status is success but error is not null (I3)', 'tool_call', ids);
  }
  // Fast path: JSON.parse values written back. If the producer wrote numbers differently
  // (Python's 1.0, 1e+16, big integers), re-read the args keeping the literals (SPEC §2).
  let args = canonicalArgs(inv.args as JsonValue);
  let argsValue = inv.args as JsonValue;
  if (sha256Hex(args) !== inv.args_hash) {
    const lossless = parseLossless(raw) as { invocation?: { args?: JsonValue } } | undefined;
    const exact = lossless?.invocation?.args;
    args = exact === undefined ? args : canonicalArgs(exact);
    argsValue = exact ?? argsValue;
    const actual = sha256Hex(args);
    if (actual !== inv.args_hash) {
      return reject('I5_args_hash', `args_hash ${inv.args_hash} does not match SHA-256 of canonical args ${actual} (I5, SPEC §2)`, 'tool_call', ids);
    }
  }
  // I5 held for the args as sent; what is stored is what is left once secrets are out, and the
  // stored args_hash is that text's (redacted at the edge, the same call stores the same).
  const red = redactCall(redactor, inv, args, argsValue);
  const row = {
    call_id: callId,
    task_id: inv.task_id ?? '',
    tool_id: inv.tool_id,
    agent_id: inv.agent_id,
    orchestrator: inv.orchestrator,
    instance_id: inv.instance_id ?? inv.orchestrator,
    args: red.args,
    args_hash: red.argsHash,
    status: inv.status,
    duration_ms: inv.duration_ms,
    result_summary: red.summary,
    error: red.error,
    cost_usd: inv.cost_usd ?? null,
    tokens_used: inv.tokens_used == null ? null : JSON.stringify(inv.tokens_used),
    created_at: chCreatedAt(inv.created_at),
    fingerprint: '',
    source,
    // A call with an approval is fingerprinted with it: the same call_id sent again with another approval is I1.
    approval: inv.approval ? approvalText(inv.approval) : '',
    redactions: red.redactions,
  };
  row.fingerprint = fingerprint('invocation', row);
  // Stored as sent (the read API serves this text as is): a summary with `1.0`, `-0.0` or a big
  // integer is re-read keeping the literals. The fingerprint stays that of the parsed values, so
  // packets stored before this keep their identity (a redelivery is still a duplicate).
  if (hasLossyNumber(raw)) {
    const exact = (parseLossless(raw) as { invocation?: { result_summary?: JsonValue } } | undefined)?.invocation?.result_summary;
    if (exact !== undefined) row.result_summary = stringifyLossless((redactor ? redactor.call(inv.tool_id, { args: null, result_summary: exact }).result_summary : exact) as JsonValue);
  }
  return { ok: true, value: { kind: 'invocation', key: callId, row } };
}

function decodeOutput(packet: OutputArtifactPacket, raw: string, source: string, redactor: Redactor | undefined): DecodeResult {
  const out = packet.output;
  const ids = [out.output_id.toLowerCase(), out.call_id.toLowerCase()];
  const bad = (msg: string) => reject('I7_output_content', `${msg} (I7)`, 'output_artifact', ids);
  let text: string;
  let hash: string | undefined;
  const isValue = typeof packet.content !== 'string';
  if (typeof packet.content === 'string') {
    text = packet.content;
  } else {
    if (out.content_type !== 'json') return bad(`content is a JSON value but content_type is ${out.content_type}`);
    // "Serialized as sent": compact JSON (JavaScript producers) or json.dumps defaults (Python),
    // tried in that order; the Python form needs the number literals as written.
    text = JSON.stringify(packet.content);
    hash = sha256Hex(text);
    if (hash !== out.content_hash) {
      const lossless = (parseLossless(raw) as { content?: JsonValue } | undefined)?.content ?? (packet.content as JsonValue);
      const python = pythonJsonDumps(lossless, { sortKeys: false });
      const pythonHash = sha256Hex(python);
      if (pythonHash === out.content_hash) {
        text = python;
        hash = pythonHash;
      }
    }
  }
  const size = utf8ByteLength(text);
  if (size === 0) return bad('content is empty; size_bytes must be > 0');
  if (out.size_bytes !== size) return bad(`size_bytes is ${out.size_bytes} but the content is ${size} bytes`);
  hash ??= sha256Hex(text);
  if (hash !== out.content_hash) return bad(`content_hash ${out.content_hash} does not match SHA-256 of the content ${hash}`);
  if (out.sample != null && out.sample !== contentSample(text) && out.sample !== text.slice(0, 500)) {
    return bad('sample is not the first 500 characters of the content');
  }
  // A JSON value serialized by JSON.stringify or json.dumps parses by construction.
  const mismatch = isValue ? null : contentTypeMismatch(out.content_type, text);
  if (mismatch) return bad(mismatch);
  const createdAt = chCreatedAt(out.created_at);
  // I7 held for the content as sent; what is stored is the content once secrets are out, with
  // the hash, size and sample of that.
  const red = redactContent(redactor, out.content_type, text, isValue ? packet.content : undefined);
  if (red.changed) {
    text = red.text;
    hash = sha256Hex(text);
  }
  const row = {
    output_id: ids[0] as string,
    call_id: ids[1] as string,
    tool_id: out.tool_id,
    content_type: out.content_type,
    content_hash: hash,
    size_bytes: red.changed ? utf8ByteLength(text) : size,
    sample: red.changed && out.sample != null ? contentSample(text) : (out.sample ?? null),
    created_at: createdAt,
    fingerprint: '',
    source,
    redactions: red.redactions,
  };
  row.fingerprint = fingerprint('output', row);
  const content = { content_hash: hash, content_type: out.content_type, content: text, size_bytes: row.size_bytes, last_seen: createdAt };
  return { ok: true, value: { kind: 'output', key: row.output_id, row, content } };
}

function decodeDependency(packet: ToolDependencyPacket, source: string, redactor: Redactor | undefined): DecodeResult {
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
function decodeHint(packet: OptimizationHintPacket, source: string, redactor: Redactor | undefined): DecodeResult {
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

function decodeTurn(packet: ModelTurnPacket, source: string, redactor: Redactor | undefined): DecodeResult {
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
    ...(t.messages == null ? {} : { messages: redactor ? redactMessages(redactor, t.messages) : t.messages }),
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

function decodeRun(packet: AgentRunPacket, source: string, redactor: Redactor | undefined): DecodeResult {
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

/** The stored args (canonical text), args_hash, summary text and error of a call, its secrets out, and where they were. */
function redactCall(redactor: Redactor | undefined, inv: ToolInvocation, args: string, argsValue: JsonValue): { args: string; argsHash: string; summary: string; error: string | null; redactions: string } {
  const summaryText = JSON.stringify(inv.result_summary);
  let out = { args, argsHash: inv.args_hash, summary: summaryText, error: inv.error ?? null };
  let summary: unknown = inv.result_summary;
  if (redactor) {
    const r = redactor.call(inv.tool_id, { args: argsValue, result_summary: inv.result_summary }, { args, summary: summaryText });
    if (r.changed) {
      const text = canonicalArgs(r.args as JsonValue);
      argsValue = r.args as JsonValue;
      summary = r.result_summary;
      out = { ...out, args: text, argsHash: sha256Hex(text), summary: JSON.stringify(summary) };
    }
    if (out.error !== null) out.error = redactor.text(out.error);
  }
  // Placeholders never need escaping: a text without their opening holds none.
  const has = (t: string | null) => t !== null && t.includes('[redacted:');
  const where = [...(has(out.args) ? placeholdersIn(argsValue, '/args') : []), ...(has(out.error) ? placeholdersIn(out.error, '/error') : []), ...(has(out.summary) ? placeholdersIn(summary, '/result_summary') : [])];
  return { ...out, redactions: where.length ? JSON.stringify(where) : '' };
}

/**
 * An output's content with its secrets out: JSON content as a value (its text stays JSON), any
 * other as text. `value`: JSON content sent as a value (not parsed again).
 */
function redactContent(redactor: Redactor | undefined, type: string, text: string, value: unknown): { text: string; changed: boolean; redactions: string } {
  let out = text;
  let walked: unknown;
  if (redactor && type === 'json') ({ text: out, value: walked } = redactor.jsonText(text, value));
  else if (redactor) out = redactor.text(text);
  // Where placeholders are: in the value walked, else (placeholders an emitter put in) parsed now.
  const where = !out.includes('[redacted:') ? [] : placeholdersIn(type !== 'json' ? out : (walked ?? (JSON.parse(out) as unknown)), '/content');
  return { text: out, changed: out !== text, redactions: where.length ? JSON.stringify(where) : '' };
}

/** The stored text of an approval: its fields in a fixed order, approved_at in UTC with milliseconds. */
function approvalText(a: Approval): string {
  return JSON.stringify({ approved_by: a.approved_by, approved_at: new Date(timestampMs(a.approved_at)).toISOString(), ...(a.reference === undefined ? {} : { reference: a.reference }) });
}

/**
 * What makes two packets "the same packet" for I1: every normalized field, not the transport
 * (source) — a redelivery from another offset or request is still the same packet. The text
 * hashed is `json.dumps(fields, sort_keys=True)`; a kind's rows always have the same fields, so
 * their sorted order and written keys are computed once per kind. An invocation's empty approval
 * is left out, so that calls without one keep the fingerprint they had before approvals existed.
 */
function fingerprint(kind: Accepted['kind'], row: { fingerprint: string; source: string; approval?: string; messages?: string }): string {
  const fields = row as unknown as Record<string, JsonValue>;
  // A turn's messages are a field only when it has some: a turn without is the same turn as before they existed.
  // (The key is the kind itself for nearly every packet: nothing is built per packet for it.)
  const key = row.approval ? `${kind}+approval` : row.messages === undefined ? kind : `${kind}+messages`;
  let keys = FIELD_ORDER.get(key);
  const count = Object.keys(fields).length;
  if (keys === undefined || keys.count !== count) {
    // Redactions are left out: they are read off the stored values (the placeholders), not sent.
    const names = Object.keys(fields)
      .filter((k) => k !== 'fingerprint' && k !== 'source' && k !== 'redactions' && !(k === 'approval' && !row.approval))
      .sort(compareCodePoints);
    keys = { count, names, written: names.map((k, i) => `${i > 0 ? ', ' : ''}${pythonJsonString(k)}: `) };
    FIELD_ORDER.set(key, keys);
  }
  let text = '{';
  for (let i = 0; i < keys.names.length; i++) {
    text += (keys.written[i] as string) + pythonJsonDumps(fields[keys.names[i] as string] as JsonValue, { sortKeys: true });
  }
  return storedFingerprint(sha256Hex(`${text}}`));
}

const FIELD_ORDER = new Map<string, { count: number; names: string[]; written: string[] }>();

/**
 * created_at as ClickHouse DateTime64(3) text in UTC. A timestamp already written as UTC with
 * milliseconds (what JavaScript's toISOString and most emitters send) is rearranged as is; any
 * other accepted form goes through Date.
 */
export function chCreatedAt(ts: string): string {
  if (ts.length === 24 && ts.charCodeAt(23) === 0x5a /* Z */ && ts.charCodeAt(19) === 0x2e /* . */) return `${ts.slice(0, 10)} ${ts.slice(11, 23)}`;
  return chTime(timestampMs(ts));
}

function idsOf(json: unknown): string[] {
  if (typeof json !== 'object' || json === null) return [];
  const j = json as Record<string, Record<string, unknown> | undefined>;
  const cand = [j.call_id, j.invocation?.call_id, j.output?.output_id, j.output?.call_id, j.dependency?.preceding_call_id, j.dependency?.succeeding_call_id, j.hint?.hint_id, j.turn?.turn_id, j.run?.run_id];
  return [...new Set(cand.filter((c): c is string => typeof c === 'string').map((c) => c.slice(0, 64)))];
}
