/**
 * Kafka records as packets, and the poison copies for the dead-letter topic. Pure: no client.
 */
import type { IHeaders } from 'kafkajs';
import type { PacketOutcome, RawPacket } from './ports.ts';

/**
 * A Kafka record as a {@link RawPacket}: its text is made from the record's bytes when read
 * (once by the decoder, again only for quarantine or the DLQ), so thousands of packet strings
 * do not stay on the heap while their rows are written.
 */
export class KafkaPacket implements RawPacket {
  constructor(
    private readonly value: Buffer | null,
    readonly bytes: number,
    readonly source: RawPacket['source'],
    readonly requestId: string | undefined,
  ) {}

  get raw(): string {
    return this.value ? this.value.toString('utf8') : '';
  }
}

/** The fields of a kafkajs message the worker reads. */
export interface KafkaRecord {
  offset: string;
  value: Buffer | null;
  headers?: IHeaders;
}

/** The packets of a partition's records. */
export function packetsOf(topic: string, partition: number, records: readonly KafkaRecord[]): RawPacket[] {
  return records.map(
    (m) =>
      new KafkaPacket(
        m.value,
        // The HTTP edge forwards an oversized packet truncated, with its real size in a header.
        Math.max(m.value?.length ?? 0, Number(header(m.headers, 'x-original-bytes') ?? 0)),
        { kind: 'kafka', topic, partition, offset: m.offset },
        header(m.headers, 'x-request-id'),
      ),
  );
}

/** Rejections that mean the record itself is unusable: copied to the dead-letter topic. */
const POISON = new Set(['oversized', 'malformed_json', 'schema']);

/** The DLQ copies of a chunk's poison records (the quarantine row stays the durable record). */
export function dlqMessages(packets: readonly RawPacket[], outcomes: readonly PacketOutcome[]): Array<{ value: string; headers: Record<string, string> }> {
  return outcomes.flatMap((o, i) => {
    const p = packets[i] as RawPacket;
    if (o.status !== 'rejected' || !POISON.has(o.reason?.code ?? '') || p.source.kind !== 'kafka') return [];
    const s = p.source;
    return [{ value: p.raw, headers: { 'x-reason': o.reason?.code ?? '', 'x-source': `${s.topic}/${s.partition}@${s.offset}` } }];
  });
}

function header(headers: IHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  const first = Array.isArray(v) ? v[0] : v;
  return first === undefined ? undefined : first.toString();
}
