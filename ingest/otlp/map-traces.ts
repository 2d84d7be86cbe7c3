/**
 * One OTLP/HTTP trace request → the packets of its tool and model spans: decoding
 * (otlp-decode.ts) and mapping (span-map.ts) in one pure step, run by the traces route on its own
 * thread or in the threads of map-pool.ts.
 */
import { decodeJsonTraces, decodeProtobufTraces } from './otlp-decode.ts';
import { MAPPABLE_SPANS, mapSpan, type SpanMapOptions } from './span-map.ts';

/** The body's encoding, from its content type. */
export type TraceEncoding = 'json' | 'protobuf';

/**
 * The packets of a request, in span order; `spanOf[i]` is the index of the span packet i came
 * from. `ignored` counts the spans that are neither tool nor model spans.
 */
export type MappedTraces = { ok: true; packets: string[]; spanOf: number[]; ignored: number } | { ok: false; error: string };

/** Decodes and maps one request body. Never throws for bad input: a body that is not a request says why. */
export function mapTraces(body: Uint8Array, as: TraceEncoding, opts: SpanMapOptions): MappedTraces {
  const decoded = as === 'json' ? decodeJsonTraces(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'), MAPPABLE_SPANS) : decodeProtobufTraces(body, MAPPABLE_SPANS);
  if (!decoded.ok) return decoded;
  const packets: string[] = [];
  const spanOf: number[] = [];
  let ignored = decoded.skipped;
  decoded.spans.forEach((span, spanIndex) => {
    const m = mapSpan(span, opts);
    if (m.kind === 'ignored') return void ignored++;
    for (const raw of m.kind === 'unmappable' ? [m.packet] : m.packets) {
      packets.push(raw);
      spanOf.push(spanIndex);
    }
  });
  return { ok: true, packets, spanOf, ignored };
}
