/**
 * The plain form of an OTLP span that the mapping reads, whichever way it arrived (protobuf read
 * by span-reader.ts, or OTLP/JSON walked by otlp-decode.ts).
 */

/** An attribute value as JavaScript: AnyValue's string, bool, int, double, array, kvlist (bytes as base64). */
export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };

/** One span with what the mapping reads, its resource and scope, and how it arrived. */
export interface OtlpSpan {
  /** 32 lowercase hex characters, as OTLP/JSON writes it. */
  traceId: string;
  /** 16 lowercase hex characters. */
  spanId: string;
  name: string;
  /** SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** The parent span's id (16 hex characters) when the span has one. */
  parentSpanId?: string;
  /** Nanoseconds since the epoch; 0n when unset. */
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttrValue>;
  /** Span status: code 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  events: Array<{ name: string; attributes: Record<string, AttrValue> }>;
  resource: Record<string, AttrValue>;
  scope: { name: string; version: string };
  /** The span in OTLP/JSON form (hex ids), for quarantine records: built when asked (most spans never are). */
  json: () => Record<string, unknown>;
  /** The span's protobuf encoding (base64) when it arrived as protobuf, built when asked. */
  protobuf?: () => string;
}

/** Result of decoding a request body: the spans kept, and how many the filter left out. */
export type DecodedTraces = { ok: true; spans: OtlpSpan[]; skipped: number } | { ok: false; error: string };

/**
 * Which spans to decode in full: those whose name is in `names` or that carry one of `keys`
 * (attribute keys); the others are counted, never converted. Without one, every span is kept.
 */
export interface SpanFilter {
  keys: ReadonlySet<string>;
  namePrefixes: readonly string[];
}
