/**
 * OTLP/HTTP trace requests in, plain spans out. The wire format is the official
 * opentelemetry-proto definitions (vendored under ./proto, tag v1.11.0) read by protobufjs;
 * nothing here knows a field number. OTLP/JSON bodies are checked against the same
 * definitions (`verify`) and walked in the same object form, with the JSON encoding's own
 * rules: trace and span ids are hex, 64-bit integers may be strings or numbers.
 */
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { AttrValue, DecodedTraces, OtlpSpan, SpanFilter } from './otlp-span.ts';
import { createSpanReader } from './span-reader.ts';

const PROTO_ROOT = fileURLToPath(new URL('./proto/', import.meta.url));

const root = new protobuf.Root();
// Imports in the .proto files are relative to the proto root, as protoc's -I would read them.
root.resolvePath = (_origin, target) => (target.startsWith('/') ? target : PROTO_ROOT + target);
root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', { keepCase: false });
root.resolveAll();

const RequestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const ResponseType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');
const SpanType = root.lookupType('opentelemetry.proto.trace.v1.Span');
const ResourceType = root.lookupType('opentelemetry.proto.resource.v1.Resource');
const ScopeType = root.lookupType('opentelemetry.proto.common.v1.InstrumentationScope');

/**
 * google.rpc.Status, the body of an OTLP/HTTP error answer: googleapis' status.proto declared
 * through protobufjs's reflection. Its `details` (field 3) is left out: never sent, and an
 * empty repeated field encodes to nothing.
 */
const StatusType = protobuf.Root.fromJSON({
  nested: { google: { nested: { rpc: { nested: { Status: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 } } } } } } } },
}).lookupType('google.rpc.Status');

export type { AttrValue, DecodedTraces, OtlpSpan, SpanFilter } from './otlp-span.ts';

type Obj = Record<string, unknown>;

const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: Number, bytes: String, defaults: false, arrays: true };
/**
 * The same with 64-bit integers left as protobufjs reads them (a Long, or a number when small):
 * read as BigInt from their two halves — their decimal text (longs: String) cost more than the
 * rest of a span's conversion.
 */
const TO_OBJECT_RAW_LONGS: protobuf.IConversionOptions = { enums: Number, bytes: String, defaults: false, arrays: true };

/** A Long as protobufjs holds one: two 32-bit halves. */
interface LongLike {
  low: number;
  high: number;
  unsigned?: boolean;
}
const isLong = (v: unknown): v is LongLike => typeof v === 'object' && v !== null && typeof (v as LongLike).low === 'number' && typeof (v as LongLike).high === 'number';
/** A Long's value, exactly. */
function longValue(v: LongLike): bigint {
  const u = (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
  return !v.unsigned && v.high < 0 ? u - (1n << 64n) : u;
}

/** A span's bytes in OTLP/JSON form (hex ids), for the quarantine record of a span read off the wire. */
function spanJson(bytes: Uint8Array): Obj {
  const o: Obj = SpanType.toObject(SpanType.decode(bytes), TO_OBJECT);
  for (const [key, size] of [['traceId', 16], ['spanId', 8], ['parentSpanId', 8]] as const) {
    const hex = base64ToHex(o[key], size);
    if (hex !== undefined) o[key] = hex;
  }
  return o;
}

const readSpans = createSpanReader({ request: RequestType, span: SpanType }, spanJson);

/**
 * Decodes an OTLP/HTTP protobuf body (ExportTraceServiceRequest) with span-reader.ts: the spans
 * the filter leaves out are peeked at, never decoded. Never throws for bad input.
 */
export function decodeProtobufTraces(body: Uint8Array, only?: SpanFilter): DecodedTraces {
  return readSpans(body, only);
}

/**
 * The same with protobufjs's generated decoder and the JSON path's walk: the oracle the reader
 * is tested against (and nothing else).
 */
export function decodeProtobufTracesReflected(body: Uint8Array, only?: SpanFilter): DecodedTraces {
  let message: protobuf.Message;
  try {
    message = RequestType.decode(body);
  } catch (err) {
    return { ok: false, error: `not an ExportTraceServiceRequest: ${(err as Error).message}` };
  }
  return walk(message, true, only);
}

/**
 * Decodes an OTLP/JSON body: ids from hex to the bytes the definitions declare, then
 * protobufjs's fromObject, which reads int64 strings and enum numbers and refuses values of
 * the wrong kind. Never throws for bad input.
 */
export function decodeJsonTraces(text: string, only?: SpanFilter): DecodedTraces {
  let req: unknown;
  try {
    req = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `not valid JSON: ${(err as Error).message}` };
  }
  if (typeof req !== 'object' || req === null || Array.isArray(req)) return { ok: false, error: 'an ExportTraceServiceRequest must be a JSON object' };
  const bad = hexIdsToBase64(req as Obj);
  if (bad) return { ok: false, error: bad };
  let message: protobuf.Message;
  try {
    message = RequestType.fromObject(req as Obj);
  } catch (err) {
    return { ok: false, error: `not an ExportTraceServiceRequest: ${(err as Error).message}` };
  }
  return walk(message, false, only);
}

/**
 * An OTLP/JSON request (hex ids) as the protobuf body an OTLP/HTTP exporter would send: for
 * benchmarks and tests that build requests by hand. Throws for a body that is not a request.
 */
export function encodeProtobufTraces(jsonText: string): Uint8Array {
  const req = JSON.parse(jsonText) as Obj;
  const bad = hexIdsToBase64(req);
  if (bad) throw new Error(bad);
  return RequestType.encode(RequestType.fromObject(req)).finish();
}

/** OTLP/JSON writes trace and span ids as hex (not protobuf JSON's base64): converts them in place. */
function hexIdsToBase64(req: Obj): string | undefined {
  const convert = (o: Obj, key: string, bytes: number, required: boolean): string | undefined => {
    const v = o[key];
    if ((v === undefined || v === '') && !required) return undefined;
    const hex = checkHex(v, bytes);
    if (hex === undefined) return `${key} must be ${bytes * 2} hex characters; got ${JSON.stringify(v)?.slice(0, 80)}`;
    o[key] = Buffer.from(hex, 'hex').toString('base64');
    return undefined;
  };
  for (const rs of list(req.resourceSpans))
    for (const ss of list(rs.scopeSpans))
      for (const s of list(ss.spans)) {
        const bad = convert(s, 'traceId', 16, true) ?? convert(s, 'spanId', 8, true) ?? convert(s, 'parentSpanId', 8, false);
        if (bad) return bad;
        for (const l of list(s.links)) {
          const badLink = convert(l, 'traceId', 16, true) ?? convert(l, 'spanId', 8, true);
          if (badLink) return `link: ${badLink}`;
        }
      }
  return undefined;
}

/** A decoded message as protobufjs builds it: its fields by name. */
type Msg = protobuf.Message & Record<string, unknown>;
const messages = (v: unknown): Msg[] => (Array.isArray(v) ? (v as Msg[]) : []);

/** Whether a span passes the filter: read off the decoded message's name and attribute keys, before anything is converted. */
function wanted(s: Msg, only: SpanFilter | undefined): boolean {
  if (!only) return true;
  const name = typeof s.name === 'string' ? s.name : '';
  if (only.namePrefixes.some((p) => name.startsWith(p))) return true;
  for (const kv of messages(s.attributes)) if (typeof kv.key === 'string' && only.keys.has(kv.key)) return true;
  return false;
}

/**
 * The spans of a decoded request. Each span kept is converted to its object form on its own
 * (toObject), so the spans the filter leaves out cost their binary decoding only.
 */
function walk(req: protobuf.Message, keepProtobuf: boolean, only?: SpanFilter): DecodedTraces {
  const id = base64ToHex;
  const spans: OtlpSpan[] = [];
  let skipped = 0;
  for (const rs of messages((req as Msg).resourceSpans)) {
    const resource = rs.resource ? attrs(ResourceType.toObject(rs.resource as Msg, TO_OBJECT).attributes) : {};
    for (const ss of messages(rs.scopeSpans)) {
      const scopeObj: Obj = ss.scope ? ScopeType.toObject(ss.scope as Msg, TO_OBJECT) : {};
      const scope = { name: String(scopeObj.name ?? ''), version: String(scopeObj.version ?? '') };
      for (const sm of messages(ss.spans)) {
        if (!wanted(sm, only)) {
          skipped++;
          continue;
        }
        const s: Obj = SpanType.toObject(sm, TO_OBJECT_RAW_LONGS);
        const traceId = id(s.traceId, 16);
        const spanId = id(s.spanId, 8);
        if (traceId === undefined || spanId === undefined) return { ok: false, error: 'a span has a missing or malformed traceId/spanId' };
        const start = nanos(s.startTimeUnixNano);
        const end = nanos(s.endTimeUnixNano);
        if (start === undefined || end === undefined) return { ok: false, error: `span ${spanId}: malformed start or end time` };
        const status = (s.status ?? {}) as Obj;
        const parentSpanId = s.parentSpanId === undefined || s.parentSpanId === '' ? undefined : id(s.parentSpanId, 8);
        // The quarantine's form: 64-bit integers as decimal text, ids as hex.
        const json = (): Obj => {
          const o: Obj = SpanType.toObject(sm, TO_OBJECT);
          return { ...o, traceId, spanId, ...(o.parentSpanId !== undefined ? { parentSpanId: parentSpanId ?? o.parentSpanId } : {}) };
        };
        spans.push({
          traceId,
          spanId,
          name: String(s.name ?? ''),
          kind: Number(s.kind ?? 0),
          ...(parentSpanId && !/^0+$/.test(parentSpanId) ? { parentSpanId } : {}),
          startNs: start,
          endNs: end,
          attributes: attrs(s.attributes),
          status: { code: Number(status.code ?? 0), message: String(status.message ?? '') },
          events: list(s.events).map((e) => ({ name: String(e.name ?? ''), attributes: attrs(e.attributes) })),
          resource,
          scope,
          json,
          ...(keepProtobuf ? { protobuf: () => Buffer.from(SpanType.encode(sm).finish()).toString('base64') } : {}),
        });
      }
    }
  }
  return { ok: true, spans, skipped };
}

function list(v: unknown): Obj[] {
  return Array.isArray(v) ? (v.filter((x) => typeof x === 'object' && x !== null) as Obj[]) : [];
}

function attrs(kvs: unknown): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of list(kvs)) if (typeof kv.key === 'string') out[kv.key] = anyValue(kv.value);
  return out;
}

/** AnyValue → JavaScript; an int64 beyond 2^53 stays a decimal string rather than lose digits. */
function anyValue(v: unknown): AttrValue {
  if (typeof v !== 'object' || v === null) return null;
  const a = v as Obj;
  if (a.stringValue !== undefined) return String(a.stringValue);
  if (a.boolValue !== undefined) return Boolean(a.boolValue);
  if (a.intValue !== undefined) {
    const big = isLong(a.intValue) ? longValue(a.intValue) : undefined;
    const n = big === undefined ? Number(a.intValue) : Number(big);
    return Number.isSafeInteger(n) ? n : String(big ?? a.intValue);
  }
  if (a.doubleValue !== undefined) return Number(a.doubleValue);
  if (a.arrayValue !== undefined) return list((a.arrayValue as Obj).values).map(anyValue);
  if (a.kvlistValue !== undefined) return attrs((a.kvlistValue as Obj).values);
  if (a.bytesValue !== undefined) return String(a.bytesValue);
  return null;
}

function nanos(v: unknown): bigint | undefined {
  if (v === undefined || v === null) return 0n;
  if (isLong(v)) return longValue(v);
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  // Beyond 2^53 a JSON number has already lost nanoseconds; keep what survives.
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return BigInt(Math.round(v));
  return undefined;
}

function base64ToHex(v: unknown, bytes: number): string | undefined {
  if (typeof v !== 'string') return undefined;
  const hex = Buffer.from(v, 'base64').toString('hex');
  return hex.length === bytes * 2 ? hex : undefined;
}

function checkHex(v: unknown, bytes: number): string | undefined {
  return typeof v === 'string' && v.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(v) ? v.toLowerCase() : undefined;
}

/** An ExportTraceServiceResponse, with partial_success when some spans were rejected. */
export function encodeTraceResponse(rejectedSpans: number, errorMessage: string, as: 'protobuf' | 'json'): Uint8Array | string {
  const body = rejectedSpans > 0 || errorMessage ? { partialSuccess: { rejectedSpans: String(rejectedSpans), errorMessage } } : {};
  if (as === 'json') return JSON.stringify(rejectedSpans > 0 || errorMessage ? { partialSuccess: { rejectedSpans, errorMessage } } : {});
  return ResponseType.encode(ResponseType.fromObject(body)).finish();
}

/** A google.rpc.Status body for an OTLP error answer (gRPC code 3 = INVALID_ARGUMENT, 16 = UNAUTHENTICATED …). */
export function encodeStatus(code: number, message: string, as: 'protobuf' | 'json'): Uint8Array | string {
  if (as === 'json') return JSON.stringify({ code, message });
  return StatusType.encode(StatusType.fromObject({ code, message })).finish();
}
