/**
 * The OTLP wire reader (ingest/otlp/span-reader.ts) against protobufjs's generated decoder, the
 * oracle: random requests with every AnyValue kind (nested arrays and key-value lists, bytes,
 * doubles, negative and beyond-2^53 integers), events, statuses, parents, resources written after
 * their scopes and fields the definitions do not know, read by both with and without the span
 * filter, must give the same spans. Truncated and random bodies are refused, never thrown.
 */
import { randomBytes } from 'node:crypto';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { decodeProtobufTraces, decodeProtobufTracesReflected, encodeProtobufTraces, type DecodedTraces } from '../../../ingest/otlp/otlp-decode.ts';
import { MAPPABLE_SPANS } from '../../../ingest/otlp/span-map.ts';

/** A seeded generator, so a failure can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] as T };
}
type R = ReturnType<typeof rng>;

const KEYS = ['gen_ai.operation.name', 'gen_ai.tool.name', 'openinference.span.kind', 'http.request.method', 'llm.request.type', 'x', 'tool_audit.task_id', 'ü-ключ'];
const hex = (r: R, bytes: number) => Array.from({ length: bytes * 2 }, () => r.pick('0123456789abcdef'.split(''))).join('');

function anyValue(r: R, depth: number): object {
  switch (r.int(depth > 1 ? 5 : 7)) {
    case 0:
      return { stringValue: r.pick(['chat', 'execute_tool', 'TOOL', '', 'é😀 text', '{"a":1}']) };
    case 1:
      return { boolValue: r.next() < 0.5 };
    case 2:
      return { intValue: r.pick(['0', '-1', '42', '9007199254740993', '-9223372036854775808', '9223372036854775807', String(r.int(1e9))]) };
    case 3:
      return { doubleValue: r.pick([0.5, -1.25, 1e300, 3]) };
    case 4:
      return { bytesValue: Buffer.from(randomBytes(r.int(5))).toString('base64') };
    case 5:
      return { arrayValue: { values: Array.from({ length: r.int(3) }, () => anyValue(r, depth + 1)) } };
    default:
      return { kvlistValue: { values: attributes(r, depth + 1) } };
  }
}
function attributes(r: R, depth = 0): object[] {
  return Array.from({ length: r.int(5) }, () => ({ key: r.pick(KEYS), ...(r.next() < 0.9 ? { value: anyValue(r, depth) } : {}) }));
}
function span(r: R): object {
  return {
    traceId: hex(r, 16),
    spanId: hex(r, 8),
    ...(r.next() < 0.5 ? { parentSpanId: r.pick([hex(r, 8), '0000000000000000']) } : {}),
    name: r.pick(['chat gpt-4o', 'execute_tool search', 'ai.toolCall', 'GET', '']),
    kind: r.int(6),
    startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(r.int(1e9))),
    endTimeUnixNano: r.next() < 0.9 ? String(1_800_000_000_000_000_000n + BigInt(r.int(1e9))) : '0',
    attributes: attributes(r),
    events: Array.from({ length: r.int(2) }, () => ({ name: r.pick(['exception', 'log']), timeUnixNano: '1', attributes: attributes(r) })),
    ...(r.next() < 0.5 ? { status: { code: r.int(3), message: r.pick(['', 'boom']) } } : {}),
  };
}
function request(r: R): string {
  return JSON.stringify({
    resourceSpans: Array.from({ length: 1 + r.int(2) }, () => ({
      ...(r.next() < 0.8 ? { resource: { attributes: attributes(r) } } : {}),
      scopeSpans: Array.from({ length: 1 + r.int(2) }, () => ({
        ...(r.next() < 0.8 ? { scope: { name: r.pick(['s', '']), version: r.pick(['1', '']) } } : {}),
        spans: Array.from({ length: r.int(6) }, () => span(r)),
      })),
    })),
  });
}

/** A decoded request as comparable data: bigints as text, each span's JSON form and its bytes decoded. */
function comparable(d: DecodedTraces): unknown {
  if (!d.ok) return { ok: false };
  return JSON.parse(
    JSON.stringify({ ...d, spans: d.spans.map((s) => ({ ...s, json: s.json(), protobuf: undefined })) }, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)),
  );
}

describe('OTLP wire reader', () => {
  it("reads 300 random requests exactly as protobufjs's decoder does, with and without the filter", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const body = encodeProtobufTraces(request(rng(seed)));
      for (const only of [undefined, MAPPABLE_SPANS]) {
        const mine = decodeProtobufTraces(body, only);
        expect(mine.ok, `seed ${seed}`).toBe(true);
        expect(comparable(mine), `seed ${seed}`).toEqual(comparable(decodeProtobufTracesReflected(body, only)));
      }
    }
  });

  it("keeps a span's own bytes for the quarantine, fields it does not know included", () => {
    const body = encodeProtobufTraces(request(rng(7)));
    const plain = decodeProtobufTraces(body);
    if (!plain.ok) throw new Error(plain.error);
    // The request again with an unknown field (number 99, a varint) appended to its first span.
    const w = protobuf.Writer.create();
    const first = Buffer.from(plain.spans[0]!.protobuf!(), 'base64');
    const unknown = Buffer.from([(99 << 3) & 0x7f | 0x80, 99 >> 4, 0x05]);
    const spanBytes = Buffer.concat([first, unknown]);
    w.uint32((1 << 3) | 2).fork().uint32((2 << 3) | 2).fork().uint32((2 << 3) | 2).bytes(spanBytes).ldelim().ldelim();
    const extended = w.finish();
    const mine = decodeProtobufTraces(extended);
    const oracle = decodeProtobufTracesReflected(extended);
    if (!mine.ok || !oracle.ok) throw new Error('not decoded');
    expect(comparable(mine)).toEqual(comparable(oracle));
    expect(Buffer.from(mine.spans[0]!.protobuf!(), 'base64')).toEqual(spanBytes);
  });

  it('reads a resource written after its scopes', () => {
    const w = protobuf.Writer.create();
    const scopes = encodeProtobufTraces(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span(rng(3))] }] }] }));
    const resource = encodeProtobufTraces(JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'late' } }] } }] }));
    // Both requests hold one ResourceSpans (field 1): their contents joined make one whose resource comes last.
    const inner = (b: Uint8Array) => {
      const r = protobuf.Reader.create(b);
      r.uint32();
      return r.bytes();
    };
    w.uint32((1 << 3) | 2).bytes(Buffer.concat([inner(scopes), inner(resource)]));
    const body = w.finish();
    const mine = decodeProtobufTraces(body);
    if (!mine.ok) throw new Error(mine.error);
    expect(mine.spans[0]?.resource).toEqual({ 'service.name': 'late' });
    expect(comparable(mine)).toEqual(comparable(decodeProtobufTracesReflected(body)));
  });

  it('refuses truncated and random bodies without throwing', () => {
    const body = encodeProtobufTraces(request(rng(11)));
    for (let cut = 1; cut < body.length; cut += Math.max(1, Math.floor(body.length / 40))) {
      const d = decodeProtobufTraces(body.subarray(0, cut));
      if (!d.ok) expect(d.error).toMatch(/ExportTraceServiceRequest|traceId/);
    }
    const r = rng(5);
    for (let i = 0; i < 200; i++) {
      const junk = Uint8Array.from({ length: r.int(64) }, () => r.int(256));
      expect(() => decodeProtobufTraces(junk)).not.toThrow();
    }
  });
});
