import { describe, expect, it } from 'vitest';
import { dlqMessages, packetsOf } from '../../../ingest/kafka-records.ts';
import type { PacketOutcome } from '../../../ingest/ports.ts';

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
      { value: 'a', headers: { 'x-reason': 'malformed_json', 'x-source': 't/1@0' } },
      { value: 'd', headers: { 'x-reason': 'schema', 'x-source': 't/1@3' } },
    ]);
  });
});
