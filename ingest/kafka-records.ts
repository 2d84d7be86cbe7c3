/**
 * Kafka records as packets, and the poison copies for the dead-letter topic. Pure: no client.
 */
import { isUtf8 } from 'node:buffer';
import type { IHeaders } from 'kafkajs';
import type { PacketOutcome, RawEncoding, RawPacket, ReplayTag } from './ports.ts';

/**
 * A Kafka record as a {@link RawPacket}: its text is made from the record's bytes when read
 * (once by the decoder, again only for quarantine or the DLQ), so thousands of packet strings
 * do not stay on the heap while their rows are written. Bytes that are not UTF-8 are never read
 * as text (that would put U+FFFD in place of what was sent): `raw` is then their base64.
 */
export class KafkaPacket implements RawPacket {
  readonly encoding: RawEncoding;

  constructor(
    /** The record's value exactly as it was (the DLQ copy). */
    readonly value: Buffer | null,
    readonly bytes: number,
    readonly source: RawPacket['source'],
    readonly requestId: string | undefined,
    readonly replay?: ReplayTag,
  ) {
    this.encoding = value === null ? 'none' : isUtf8(value) ? 'utf8' : 'base64';
  }

  get raw(): string {
    if (this.value === null) return '';
    return this.value.toString(this.encoding === 'base64' ? 'base64' : 'utf8');
  }

  /** The record's bytes when they are the UTF-8 of `raw`: decode threads and quarantine take them as they are. */
  get rawBytes(): Uint8Array | undefined {
    return this.encoding === 'utf8' ? (this.value as Buffer) : undefined;
  }
}

/** Kafka headers of a replayed packet (kafka-edge.ts writes them, {@link packetsOf} reads them). */
export const REPLAY_HEADERS = { quarantineId: 'x-replay-of', replayId: 'x-replay-id', keyId: 'x-replay-key', corrected: 'x-replay-corrected' } as const;

/** The headers that carry a replay tag through Kafka. */
export function replayHeaders(t: ReplayTag): Record<string, string> {
  return { [REPLAY_HEADERS.quarantineId]: t.quarantineId, [REPLAY_HEADERS.replayId]: t.replayId, [REPLAY_HEADERS.keyId]: t.keyId, [REPLAY_HEADERS.corrected]: String(t.corrected) };
}

function replayOf(headers: IHeaders | undefined): ReplayTag | undefined {
  const quarantineId = header(headers, REPLAY_HEADERS.quarantineId);
  if (quarantineId === undefined) return undefined;
  return {
    quarantineId,
    replayId: header(headers, REPLAY_HEADERS.replayId) ?? '',
    keyId: header(headers, REPLAY_HEADERS.keyId) ?? '',
    corrected: header(headers, REPLAY_HEADERS.corrected) === 'true',
  };
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
        replayOf(m.headers),
      ),
  );
}

/** Rejections that mean the record itself is unusable: copied to the dead-letter topic. */
const POISON = new Set(['oversized', 'invalid_utf8', 'malformed_json', 'schema']);

/**
 * The DLQ copies of a chunk's poison records, with the record's exact bytes (the quarantine row
 * stays the durable record). A replayed packet is not copied again: it was quarantined once.
 */
export function dlqMessages(packets: readonly RawPacket[], outcomes: readonly PacketOutcome[]): Array<{ value: string | Buffer | null; headers: Record<string, string> }> {
  return outcomes.flatMap((o, i) => {
    const p = packets[i] as RawPacket;
    if (o.status !== 'rejected' || !POISON.has(o.reason?.code ?? '') || p.source.kind !== 'kafka' || p.replay) return [];
    return [dlqRecord(p, { 'x-reason': o.reason?.code ?? '' })];
  });
}

/** A packet as a DLQ message: its exact bytes, the given headers, and x-source (topic/partition@offset). */
export function dlqRecord(p: RawPacket, headers: Record<string, string>): { value: string | Buffer | null; headers: Record<string, string> } {
  const s = p.source;
  const where = s.kind === 'kafka' ? `${s.topic}/${s.partition}@${s.offset}` : s.kind;
  return { value: p instanceof KafkaPacket ? p.value : p.raw, headers: { ...headers, 'x-source': where } };
}

function header(headers: IHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  const first = Array.isArray(v) ? v[0] : v;
  return first === undefined ? undefined : first.toString();
}
