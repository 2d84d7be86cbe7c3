/**
 * HTTP ingest when Kafka is configured: each packet is judged at once for the answer; valid
 * packets are produced to the packet topic with acks from all in-sync replicas (the ingest
 * worker writes them), invalid ones are quarantined directly with their HTTP request id.
 * Resolves only when both are durable.
 */
import type { Producer } from 'kafkajs';
import type { PacketIngest } from '../api/routes/packets.ts';
import { AppError } from '../errors.ts';
import { decodePacket } from './decode-packet.ts';
import { acceptedIds, KIND_PACKET_TYPE, type Accepted, type RawPacket } from './rows.ts';
import type { PacketOutcome, SegmentWriter } from './segment-writer.ts';

/** The partition key: one task's packets stay in order (outputs carry no task: their call). */
export function partitionKey(a: Accepted): string {
  if (a.kind === 'invocation') return a.row.task_id || a.row.call_id;
  if (a.kind === 'output') return a.row.call_id;
  return a.row.task_id;
}

/** Creates the Kafka-backed {@link PacketIngest}. */
export function createKafkaEdge(deps: { producer: Producer; topic: string; writer: SegmentWriter; maxPacketBytes: number }): PacketIngest {
  return {
    async submit(packets: RawPacket[]): Promise<PacketOutcome[]> {
      const decoded = packets.map((p) => decodePacket(p, deps.maxPacketBytes));
      const outcomes: PacketOutcome[] = new Array(packets.length);
      const messages: Array<{ key: string; value: string; headers: Record<string, string> }> = [];
      const invalid: Array<{ i: number; p: RawPacket }> = [];
      decoded.forEach((d, i) => {
        const p = packets[i] as RawPacket;
        if (!d.ok) {
          invalid.push({ i, p });
          return;
        }
        const s = p.source;
        const headers: Record<string, string> = s.kind === 'http' ? { 'x-request-id': s.requestId, 'x-packet-index': String(s.index) } : {};
        messages.push({ key: partitionKey(d.value), value: p.raw, headers });
        outcomes[i] = { status: 'accepted', packetType: KIND_PACKET_TYPE[d.value.kind], ids: acceptedIds(d.value) };
      });
      const quarantined = invalid.length ? deps.writer.write(invalid.map((x) => x.p)) : Promise.resolve([]);
      const produced = messages.length
        ? deps.producer.send({ topic: deps.topic, acks: -1, messages }).catch((err: unknown) => {
            throw new AppError('KAFKA_PRODUCE_FAILED', `Kafka did not acknowledge the packets: ${(err as Error).message}`, { retryable: true, cause: err });
          })
        : Promise.resolve();
      const [q] = await Promise.all([quarantined, produced]);
      invalid.forEach(({ i }, k) => (outcomes[i] = q[k] as PacketOutcome));
      return outcomes;
    },
  };
}

