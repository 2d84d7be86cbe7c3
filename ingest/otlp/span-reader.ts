/**
 * OTLP/HTTP protobuf requests read straight off the wire into plain spans, with protobufjs's
 * `Reader` and the field numbers of the vendored opentelemetry-proto definitions (taken from their
 * reflection: nothing here writes a field number down).
 *
 * Why not the generated decoder: an agent's export is mostly spans tool-audit ignores, and the
 * generated decoder builds a message object for every span, key-value and AnyValue (deleting the
 * other fields of every oneof it sets), which was then converted again to plain objects. Measured
 * on the trace-heavy workload (ten spans per tool call): the decoding cost ~60 % of the route's
 * main-thread time per call. Here a span is first peeked at (its name and attribute keys only);
 * only the spans the filter wants are read in full, once, into the form the mapping reads. The
 * generated decoder stays the oracle: the tests compare both on the same bytes.
 */
import protobuf from 'protobufjs';
import type { AttrValue, DecodedTraces, OtlpSpan, SpanFilter } from './otlp-span.ts';
import { fieldNumbers, type Fields, type TraceTypes } from './span-fields.ts';

// Wire types (protobuf encoding).
const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;

/** A Long as protobufjs's reader returns one: two 32-bit halves. */
interface LongLike {
  low: number;
  high: number;
}


/** Reads requests of the given types; build once (the field numbers are looked up here). */
export function createSpanReader(types: TraceTypes, toJson: (bytes: Uint8Array) => Record<string, unknown>) {
  const F = fieldNumbers(types);
  return (body: Uint8Array, only?: SpanFilter): DecodedTraces => {
    try {
      return readRequest(F, body, only, toJson);
    } catch (err) {
      return { ok: false, error: `not an ExportTraceServiceRequest: ${(err as Error).message}` };
    }
  };
}

/** Runs `each` for every field of the message in [r.pos, end): its number and wire type. */
function fields(r: protobuf.Reader, end: number, each: (field: number, wire: number) => boolean): void {
  while (r.pos < end) {
    const tag = r.uint32();
    const field = tag >>> 3;
    const wire = tag & 7;
    if (field === 0) throw new Error(`invalid field number 0 at offset ${r.pos}`);
    if (!each(field, wire)) r.skipType(wire);
  }
  if (r.pos !== end) throw new Error('a message overruns its length');
}

/** The end offset of the length-delimited field at the reader (its length read). */
const endOf = (r: protobuf.Reader): number => {
  const len = r.uint32();
  const end = r.pos + len;
  if (end > r.len) throw new Error(`a length of ${len} overruns the body`);
  return end;
};

/** The [start, end) of the length-delimited field at the reader, which moves past it. */
function range(r: protobuf.Reader): [number, number] {
  const end = endOf(r);
  const start = r.pos;
  r.pos = end;
  return [start, end];
}

/** What a request's walk gathers. */
interface Walk {
  spans: OtlpSpan[];
  skipped: number;
  error?: string;
}

function readRequest(F: Fields, body: Uint8Array, only: SpanFilter | undefined, toJson: (bytes: Uint8Array) => Record<string, unknown>): DecodedTraces {
  const r = protobuf.Reader.create(body);
  const walk: Walk = { spans: [], skipped: 0 };
  fields(r, r.len, (f, w) => {
    if (f !== F.resourceSpans || w !== LEN || walk.error) return false;
    const rsEnd = endOf(r);
    let resource: Record<string, AttrValue> = {};
    const scopeSpans: Array<[number, number]> = [];
    fields(r, rsEnd, (f2, w2) => {
      if (w2 !== LEN) return false;
      if (f2 === F.rsResource) {
        const end = endOf(r);
        resource = {};
        fields(r, end, (f3, w3) => f3 === F.resourceAttributes && w3 === LEN && (keyValue(F, r, resource), true));
        return true;
      }
      // Spans are read after the whole ResourceSpans: its resource may follow its scopes.
      if (f2 === F.rsScopeSpans) scopeSpans.push(range(r));
      return f2 === F.rsScopeSpans;
    });
    for (const [start, end] of scopeSpans) readScopeSpans(F, r, start, end, resource, { body, only, toJson }, walk);
    r.pos = rsEnd;
    return true;
  });
  return walk.error ? { ok: false, error: walk.error } : { ok: true, spans: walk.spans, skipped: walk.skipped };
}

/** One ScopeSpans in [start, end): its scope, then each of its spans the filter wants. */
function readScopeSpans(F: Fields, r: protobuf.Reader, start: number, end: number, resource: Record<string, AttrValue>, req: { body: Uint8Array; only: SpanFilter | undefined; toJson: (bytes: Uint8Array) => Record<string, unknown> }, walk: Walk): void {
  r.pos = start;
  const scope = { name: '', version: '' };
  const spanRanges: Array<[number, number]> = [];
  fields(r, end, (f, w) => {
    if (w !== LEN) return false;
    if (f === F.ssScope) {
      const sEnd = endOf(r);
      scope.name = '';
      scope.version = '';
      fields(r, sEnd, (f2, w2) => {
        if (w2 !== LEN || (f2 !== F.scopeName && f2 !== F.scopeVersion)) return false;
        scope[f2 === F.scopeName ? 'name' : 'version'] = r.stringVerify();
        return true;
      });
      return true;
    }
    if (f === F.ssSpans) spanRanges.push(range(r));
    return f === F.ssSpans;
  });
  for (const [s, e] of spanRanges) {
    if (walk.error) return;
    if (req.only && !wanted(F, r, s, e, req.only)) {
      walk.skipped++;
      continue;
    }
    const span = readSpan(F, r, s, e, resource, scope, req.body, req.toJson);
    if (typeof span === 'string') walk.error = span;
    else walk.spans.push(span);
  }
}

/** Whether the span in [start, end) passes the filter: its name and attribute keys only. */
function wanted(F: Fields, r: protobuf.Reader, start: number, end: number, only: SpanFilter): boolean {
  r.pos = start;
  let name = '';
  let keyHit = false;
  fields(r, end, (f, w) => {
    if (w !== LEN) return false;
    if (f === F.name) {
      name = r.stringVerify();
      return true;
    }
    if (f !== F.attributes || keyHit) return false;
    const kvEnd = endOf(r);
    fields(r, kvEnd, (f2, w2) => {
      if (f2 !== F.kvKey || w2 !== LEN) return false;
      if (only.keys.has(r.stringVerify())) keyHit = true;
      return true;
    });
    return true;
  });
  return keyHit || only.namePrefixes.some((p) => name.startsWith(p));
}

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** A fixed64 as a BigInt, exactly (two little-endian halves). */
function fixed64(r: protobuf.Reader): bigint {
  const low = r.fixed32();
  const high = r.fixed32();
  return (BigInt(high) << 32n) | BigInt(low);
}

/** One span in full, or the reason it cannot be one (the same reasons as the JSON path's). */
function readSpan(F: Fields, r: protobuf.Reader, start: number, end: number, resource: Record<string, AttrValue>, scope: { name: string; version: string }, body: Uint8Array, toJson: (bytes: Uint8Array) => Record<string, unknown>): OtlpSpan | string {
  r.pos = start;
  let traceId: Uint8Array | undefined;
  let spanId: Uint8Array | undefined;
  let parent: Uint8Array | undefined;
  let name = '';
  let kind = 0;
  let startNs = 0n;
  let endNs = 0n;
  const attributes: Record<string, AttrValue> = {};
  const events: OtlpSpan['events'] = [];
  const status = { code: 0, message: '' };
  fields(r, end, (f, w) => {
    if (w === LEN) {
      if (f === F.traceId) traceId = r.bytes();
      else if (f === F.spanId) spanId = r.bytes();
      else if (f === F.parentSpanId) parent = r.bytes();
      else if (f === F.name) name = r.stringVerify();
      else if (f === F.attributes) keyValue(F, r, attributes);
      else if (f === F.events) events.push(readEvent(F, r));
      else if (f === F.status) readStatus(F, r, status);
      else return false;
      return true;
    }
    if (f === F.kind && w === VARINT) kind = r.int32();
    else if (f === F.start && w === FIXED64) startNs = fixed64(r);
    else if (f === F.end && w === FIXED64) endNs = fixed64(r);
    else return false;
    return true;
  });
  if (traceId?.length !== 16 || spanId?.length !== 8) return 'a span has a missing or malformed traceId/spanId';
  const parentSpanId = parent?.length === 8 ? hex(parent) : undefined;
  return new ReadSpan({
    traceId: hex(traceId),
    spanId: hex(spanId),
    name,
    kind,
    ...(parentSpanId && !/^0+$/.test(parentSpanId) ? { parentSpanId } : {}),
    startNs,
    endNs,
    attributes,
    status,
    events,
    resource,
    scope,
  }, body.subarray(start, end), toJson);
}

type SpanData = Omit<OtlpSpan, 'json' | 'protobuf'>;

/** A span read off the wire; its JSON form and base64 bytes are built when asked (quarantine only). */
class ReadSpan implements OtlpSpan {
  traceId!: string;
  spanId!: string;
  name!: string;
  kind!: number;
  parentSpanId?: string;
  startNs!: bigint;
  endNs!: bigint;
  attributes!: Record<string, AttrValue>;
  status!: { code: number; message: string };
  events!: Array<{ name: string; attributes: Record<string, AttrValue> }>;
  resource!: Record<string, AttrValue>;
  scope!: { name: string; version: string };
  // Private (#): not among the span's own enumerable fields.
  readonly #bytes: Uint8Array;
  readonly #toJson: (bytes: Uint8Array) => Record<string, unknown>;
  constructor(data: SpanData, bytes: Uint8Array, toJson: (bytes: Uint8Array) => Record<string, unknown>) {
    Object.assign(this, data);
    this.#bytes = bytes;
    this.#toJson = toJson;
  }
  json(): Record<string, unknown> {
    return this.#toJson(this.#bytes);
  }
  /** The span's bytes exactly as they arrived. */
  protobuf(): string {
    return Buffer.from(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.byteLength).toString('base64');
  }
}

function readEvent(F: Fields, r: protobuf.Reader): { name: string; attributes: Record<string, AttrValue> } {
  const end = endOf(r);
  const e = { name: '', attributes: {} as Record<string, AttrValue> };
  fields(r, end, (f, w) => {
    if (w !== LEN) return false;
    if (f === F.eventName) e.name = r.stringVerify();
    else if (f === F.eventAttributes) keyValue(F, r, e.attributes);
    else return false;
    return true;
  });
  return e;
}

function readStatus(F: Fields, r: protobuf.Reader, status: { code: number; message: string }): void {
  const end = endOf(r);
  // A repeated message field is replaced, not merged, as protobufjs's decoder does.
  status.code = 0;
  status.message = '';
  fields(r, end, (f, w) => {
    if (f === F.statusMessage && w === LEN) status.message = r.stringVerify();
    else if (f === F.statusCode && w === VARINT) status.code = r.int32();
    else return false;
    return true;
  });
}

/** A KeyValue into `out` (a later key wins). */
function keyValue(F: Fields, r: protobuf.Reader, out: Record<string, AttrValue>): void {
  const end = endOf(r);
  let key: string | undefined;
  let value: AttrValue = null;
  fields(r, end, (f, w) => {
    if (w !== LEN) return false;
    if (f === F.kvKey) key = r.stringVerify();
    else if (f === F.kvValue) value = anyValue(F, r);
    else return false;
    return true;
  });
  if (key !== undefined) out[key] = value;
}

/** AnyValue → JavaScript, as otlp-decode's anyValue reads the decoded message (bytes as base64). */
function anyValue(F: Fields, r: protobuf.Reader): AttrValue {
  const end = endOf(r);
  let v: AttrValue = null;
  fields(r, end, (f, w) => {
    if (f === F.string && w === LEN) v = r.stringVerify();
    else if (f === F.bool && w === VARINT) v = r.bool();
    else if (f === F.int && w === VARINT) v = int64(r.int64() as unknown as LongLike | number);
    else if (f === F.double && w === FIXED64) v = r.double();
    else if (f === F.array && w === LEN) v = list(F, r, F.arrayValues, (out: AttrValue[]) => out.push(anyValue(F, r)), [] as AttrValue[]);
    else if (f === F.kvlist && w === LEN) v = list(F, r, F.kvlistValues, (out: Record<string, AttrValue>) => keyValue(F, r, out), {} as Record<string, AttrValue>);
    else if (f === F.bytes && w === LEN) {
      const b = r.bytes();
      v = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
    } else return false;
    return true;
  });
  return v;
}

/** The repeated `values` of an ArrayValue or KeyValueList. */
function list<T>(F: Fields, r: protobuf.Reader, valuesField: number, add: (out: T) => void, out: T): T {
  const end = endOf(r);
  fields(r, end, (f, w) => f === valuesField && w === LEN && (add(out), true));
  return out;
}

/** An int64 as a number when exact, else its decimal text. */
function int64(v: LongLike | number): AttrValue {
  if (typeof v === 'number') return v;
  const u = (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
  const big = v.high < 0 ? u - (1n << 64n) : u;
  const n = Number(big);
  return Number.isSafeInteger(n) ? n : String(big);
}
