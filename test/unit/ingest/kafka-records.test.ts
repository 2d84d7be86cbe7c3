import { describe, expect, it } from 'vitest';
import { dlqMessages, packetsOf, replayHeaders } from '../../../ingest/kafka-records.ts';
import type { PacketOutcome, RawPacket } from '../../../ingest/ports.ts';

describe('Kafka records', () => {
  it('become packets with their source, the real size of a truncated record and the HTTP request id', () => {
    const [a, b] = packetsOf('t', 3, [
      { offset: '10', value: Buffer.from('{"x":"é"}') },
      { offset: '11', value: Buffer.from('{"x"'), headers: { 'x-original-bytes': Buffer.from('5000'), 'x-request-id': 'req-1' } },
    ]);
    expect(a).toMatchObject({ raw: '{"x":"é"}', bytes: 10, source: { kind: 'kafka', topic: 't', partition: 3, offset: '10' }, requestId: undefined });
    expect(b).toMatchObject({ raw: '{"x"', bytes: 5000, requestId: 'req-1' });
    expect(packetsOf('t', 0, [{ offset: '1', value: null }])[0]?.raw).toBe('');
  });

  it('copy only poison (oversized, malformed, schema) Kafka records to the DLQ, with reason and source', () => {
    const packets = packetsOf('t', 1, ['a', 'b', 'c', 'd'].map((v, i) => ({ offset: String(i), value: Buffer.from(v) })));
    const rejected = (code: string): PacketOutcome => ({ status: 'rejected', packetType: null, ids: [], reason: { code, message: code } });
    const outcomes: PacketOutcome[] = [rejected('malformed_json'), rejected('I5_args_hash'), { status: 'accepted', packetType: 'tool_call', ids: [] }, rejected('schema')];
    expect(dlqMessages(packets, outcomes)).toEqual([
      { value: Buffer.from('a'), headers: { 'x-reason': 'malformed_json', 'x-source': 't/1@0' } },
      { value: Buffer.from('d'), headers: { 'x-reason': 'schema', 'x-source': 't/1@3' } },
    ]);
  });

  it('keep bytes that are not UTF-8 exactly (base64, never U+FFFD) and tell a null value from an empty one', () => {
    const bad = Buffer.from([0x7b, 0x22, 0x63, 0x61, 0x66, 0xe9, 0x22, 0x7d]); // {"caf\xE9"}
    const [a, n, e] = packetsOf('t', 0, [
      { offset: '1', value: bad },
      { offset: '2', value: null },
      { offset: '3', value: Buffer.alloc(0) },
    ]);
    expect(a?.encoding).toBe('base64');
    expect(Buffer.from(a?.raw ?? '', 'base64').equals(bad)).toBe(true);
    expect(a?.raw).not.toContain('\ufffd');
    expect([n?.encoding, n?.raw]).toEqual(['none', '']);
    expect([e?.encoding, e?.raw]).toEqual(['utf8', '']);
    // The DLQ copy is the record's own bytes.
    const rejected: PacketOutcome = { status: 'rejected', packetType: null, ids: [], reason: { code: 'invalid_utf8', message: '' } };
    expect(dlqMessages([a as RawPacket], [rejected])[0]?.value).toEqual(bad);
  });

  it('carry a replay tag through Kafka headers, and never copy a replayed packet to the DLQ again', () => {
    const tag = { quarantineId: 'http:r#0', replayId: 'rp-1', keyId: 'k:abc', corrected: true };
    const [p] = packetsOf('t', 0, [{ offset: '1', value: Buffer.from('x'), headers: Object.fromEntries(Object.entries(replayHeaders(tag)).map(([k, v]) => [k, Buffer.from(v)])) }]);
    expect(p?.replay).toEqual(tag);
    const rejected: PacketOutcome = { status: 'rejected', packetType: null, ids: [], reason: { code: 'malformed_json', message: '' } };
    expect(dlqMessages([p as RawPacket], [rejected])).toEqual([]);
  });
});
