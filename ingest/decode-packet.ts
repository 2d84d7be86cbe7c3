/**
 * Decode one raw packet and check every per-packet MUST rule of SPEC §3 (I2, I3, I5, I6, I7): the
 * envelope, the schema, calls and outputs here; dependencies, hints, model turns and agent runs in
 * decode-records.ts.
 * Pure: the cross-packet rule I1 (call_id uniqueness) is the batch writer's job, because it
 * needs what is already stored.
 */
import type { z } from 'zod';
import { canonicalArgs, pythonJsonDumps, type JsonValue } from '../schemas/canonical-json.ts';
import { timestampMs } from '../schemas/common.ts';
import { contentTypeMismatch } from '../schemas/content-type.ts';
import { contentSample, sha256Hex, utf8ByteLength } from '../schemas/hashing.ts';
import { parseLossless } from '../schemas/lossless-json.ts';
import { hasLossyNumber, stringifyLossless } from '../schemas/raw-json.ts';
import {
  packetSchema,
  PACKET_TYPES,
  type OutputArtifactPacket,
  type Packet,
  type ToolCallPacket,
} from '../schemas/packets.ts';
import { placeholdersIn, type Redactor } from '../schemas/redaction-policy.ts';
import type { ToolInvocation } from '../schemas/tool-invocation.ts';
import { isValidPacket } from './packet-check.ts';
import type { Approval } from '../schemas/tool-invocation.ts';
import type { RawEncoding } from './ports.ts';
import { sourceKey, type DecodeResult, type RawPacket } from './rows.ts';
import { chCreatedAt, fingerprint, reject } from './decode-common.ts';
import { decodeDependency, decodeHint, decodeRun, decodeTurn } from './decode-records.ts';

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

function idsOf(json: unknown): string[] {
  if (typeof json !== 'object' || json === null) return [];
  const j = json as Record<string, Record<string, unknown> | undefined>;
  const cand = [j.call_id, j.invocation?.call_id, j.output?.output_id, j.output?.call_id, j.dependency?.preceding_call_id, j.dependency?.succeeding_call_id, j.hint?.hint_id, j.turn?.turn_id, j.run?.run_id];
  return [...new Set(cand.filter((c): c is string => typeof c === 'string').map((c) => c.slice(0, 64)))];
}
