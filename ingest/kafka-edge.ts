/**
 * HTTP ingest when Kafka is configured: each packet is judged at once for the answer, and every
 * packet — valid or not — is produced to the packet topic with acks from all in-sync replicas.
 * The ingest worker then writes the valid ones and quarantines the rest (with the HTTP request
 * id from the headers), so the API process needs no write access to ClickHouse. Resolves only
 * when Kafka acknowledged. A replayed packet (POST /v1/quarantine/replay) is produced like any
 * other, with its replay tag in headers: the worker records what became of it.
 */
import type { Producer } from 'kafkajs';
import { AppError } from '../platform/errors.ts';
import { utf8ByteLength } from '../schemas/hashing.ts';
import type { Redactor } from '../schemas/redaction-policy.ts';
import { decodePacket } from './decode-packet.ts';
import { topicText } from './edge-redaction.ts';
import { replayHeaders } from './kafka-records.ts';
import { acceptedIds, KIND_PACKET_TYPE, type Accepted, type RawPacket } from './rows.ts';
import type { PacketIngest, PacketOutcome } from './ports.ts';

/** The partition key: one task's packets stay in order (outputs carry no task: their call; a hint: its id). */
export function partitionKey(a: Accepted): string {
  if (a.kind === 'invocation') return a.row.task_id || a.row.call_id;
  if (a.kind === 'output') return a.row.call_id;
  if (a.kind === 'hint') return a.row.hint_id;
  // A turn or a run goes with its task's calls.
  return a.row.task_id;
}

/**
 * Creates the Kafka-backed {@link PacketIngest}. With a `redactor` (the deployment's redaction),
 * each packet is produced with its secrets out (edge-redaction.ts): the topic never holds them.
 */
export function createKafkaEdge(deps: { producer: Producer; topic: string; maxPacketBytes: number; redactor?: Redactor | undefined }): PacketIngest {
  return {
    async submit(packets: RawPacket[]): Promise<PacketOutcome[]> {
      const outcomes: PacketOutcome[] = [];
      const messages = packets.map((p) => {
        const bytes = p.bytes ?? utf8ByteLength(p.raw);
        const d = decodePacket({ ...p, bytes }, deps.maxPacketBytes, deps.redactor);
        const headers: Record<string, string> = p.source.kind === 'http' ? { 'x-request-id': p.source.requestId, 'x-packet-index': String(p.source.index) } : {};
        // A replay travels with its tag: the worker records its outcome instead of quarantining it again.
        if (p.replay) Object.assign(headers, replayHeaders(p.replay));
        // A replay of bytes that were not UTF-8 (or of a record without a value) goes back as it was.
        let value: string | Buffer | null = p.encoding === 'base64' ? Buffer.from(p.raw, 'base64') : p.encoding === 'none' ? null : p.raw;
        if (bytes > deps.maxPacketBytes) {
          // Never more than the limit into Kafka; the worker quarantines it as oversized.
          value = Buffer.from(p.raw, 'utf8').subarray(0, deps.maxPacketBytes).toString('utf8');
          headers['x-original-bytes'] = String(bytes);
        }
        if (deps.redactor && typeof value === 'string') value = topicText(value, d, deps.redactor);
        if (d.ok) {
          outcomes.push({ status: 'accepted', packetType: KIND_PACKET_TYPE[d.value.kind], ids: acceptedIds(d.value) });
          return { key: partitionKey(d.value), value, headers };
        }
        outcomes.push({ status: 'rejected', packetType: d.error.packetType, ids: d.error.ids, reason: { code: d.error.code, message: d.error.message } });
        return { key: d.error.ids[0] ?? 'rejected', value, headers };
      });
      if (messages.length) {
        await deps.producer.send({ topic: deps.topic, acks: -1, messages }).catch((err: unknown) => {
          throw new AppError('KAFKA_PRODUCE_FAILED', `Kafka did not acknowledge the packets: ${(err as Error).message}`, { retryable: true, cause: err });
        });
      }
      return outcomes;
    },
  };
}
