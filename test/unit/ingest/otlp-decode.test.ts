/**
 * Decoding OTLP requests: spans no dialect could map are skipped before conversion and counted;
 * 64-bit values read exactly (nanosecond times, an int attribute beyond 2^53) in both encodings;
 * the quarantine form writes them as decimal text. Oracles: the values written into the request.
 */
import { describe, expect, it } from 'vitest';
import { decodeJsonTraces, decodeProtobufTraces, encodeProtobufTraces } from '../../../ingest/otlp/otlp-decode.ts';
import { MAPPABLE_SPANS } from '../../../ingest/otlp/span-map.ts';

const START = '1763900000123456789';
const request = JSON.stringify({
  resourceSpans: [{
    resource: { attributes: [{ key: 'service.name', value: { stringValue: 'agent' } }] },
    scopeSpans: [{
      scope: { name: 's', version: '1' },
      spans: [
        { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'aaaaaaaaaaaaaaaa', name: 'GET', kind: 3, startTimeUnixNano: START, endTimeUnixNano: START, attributes: [{ key: 'http.request.method', value: { stringValue: 'GET' } }] },
        { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'bbbbbbbbbbbbbbbb', parentSpanId: 'aaaaaaaaaaaaaaaa', name: 'chat', kind: 3, startTimeUnixNano: START, endTimeUnixNano: '1763900001000000001', attributes: [{ key: 'gen_ai.operation.name', value: { stringValue: 'chat' } }, { key: 'big', value: { intValue: '1152921504606846977' } }, { key: 'small', value: { intValue: 42 } }] },
      ],
    }],
  }],
});

describe('OTLP decoding', () => {
  for (const [encoding, decode] of [['protobuf', () => decodeProtobufTraces(encodeProtobufTraces(request), MAPPABLE_SPANS)], ['json', () => decodeJsonTraces(request, MAPPABLE_SPANS)]] as const) {
    it(`${encoding}: skips the spans no dialect maps, reads 64-bit values exactly`, () => {
      const d = decode();
      if (!d.ok) throw new Error(d.error);
      expect(d.skipped).toBe(1);
      expect(d.spans).toHaveLength(1);
      const [s] = d.spans;
      expect(s).toMatchObject({ spanId: 'bbbbbbbbbbbbbbbb', parentSpanId: 'aaaaaaaaaaaaaaaa', kind: 3, startNs: BigInt(START), endNs: 1763900001000000001n, resource: { 'service.name': 'agent' }, scope: { name: 's', version: '1' } });
      expect(s?.attributes).toEqual({ 'gen_ai.operation.name': 'chat', big: '1152921504606846977', small: 42 });
      expect(s?.json()).toMatchObject({ traceId: '5b8efff798038103d269b633813fc60c', spanId: 'bbbbbbbbbbbbbbbb', startTimeUnixNano: START, endTimeUnixNano: '1763900001000000001' });
      // A span that arrived as protobuf keeps its own bytes for the quarantine: its name is in them.
      if (encoding === 'protobuf') expect(Buffer.from(s!.protobuf!(), 'base64').includes(Buffer.from('chat'))).toBe(true);
    });
  }

  it('keeps every span without a filter', () => {
    const d = decodeJsonTraces(request);
    expect(d.ok && [d.spans.length, d.skipped]).toEqual([2, 0]);
  });
});
