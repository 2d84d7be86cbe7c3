/**
 * Delivers packet batches to Kafka (SPEC §6: durable means acked by all in-sync replicas).
 * The producer connects on the first send, so creating an emitter never waits for a broker.
 * kafkajs (an optional peer of the emitter package) is loaded when a transport is created,
 * never at import, and this module's types do not mention it.
 */
import type { Kafka, Producer } from 'kafkajs';
import { errorMessage } from '../platform/errors.ts';
import { createKafka } from '../platform/kafka/client.ts';
import { kafkajs } from '../platform/kafka/kafkajs.ts';
import { noopLogger, type MinimalLogger } from '../platform/minimal-logger.ts';
import { DeliveryError, type PacketTransport } from './transport.ts';

/** The topic packets go to unless told otherwise. */
export const DEFAULT_TOPIC = 'tool_audit.packets';

/**
 * A kafkajs `Kafka` client. Described by the one method used, so that these types compile for
 * a consumer without kafkajs installed; anything else than a kafkajs client fails at runtime.
 */
export interface KafkaClient {
  producer(config: object): unknown;
}

/** Where and how to produce: an existing kafkajs client, or brokers (+ clientId) to make one. */
export interface KafkaTransportOptions {
  /** A kafkajs client the process already has. */
  kafka?: KafkaClient;
  /** Bootstrap brokers, e.g. `['127.0.0.1:9092']`, when no client is given. */
  brokers?: string[];
  /** Client id of a client made from brokers; default `tool-audit-emitter`. */
  clientId?: string;
  /** Default `tool_audit.packets`. */
  topic?: string;
  /** How long the brokers may take to ack a batch; default 30 000 ms. */
  ackTimeoutMs?: number;
  /** Where kafkajs logs go when the client is made here; default nowhere. */
  logger?: MinimalLogger;
}

// Kafka refuses these for this batch whatever we do; retrying would only block the queue.
const NON_RETRYABLE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'INVALID_REQUIRED_ACKS']);

/** Creates a Kafka {@link PacketTransport}. */
export function createKafkaTransport(options: KafkaTransportOptions): PacketTransport {
  const topic = options.topic ?? DEFAULT_TOPIC;
  const kafka = (options.kafka as Kafka | undefined) ?? clientFrom(options);
  const { CompressionTypes, Partitioners } = kafkajs();
  const producer: Producer = kafka.producer({
    // Not idempotent (as the issue asks): a redelivered packet is recognised at ingest (I1).
    idempotent: false,
    // One request in flight keeps a partition's order even when kafkajs retries inside send.
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    // Explicit, so kafkajs does not warn about its v2 default change; same murmur2 hashing as Java clients.
    createPartitioner: Partitioners.DefaultPartitioner,
    // Short: the buffer retries whole batches itself, with its own backoff and counters.
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 2_000 },
  });
  let connected: Promise<void> | null = null;
  producer.on(producer.events.DISCONNECT, () => {
    connected = null;
  });

  return {
    async send(batch) {
      try {
        connected ??= producer.connect();
        await connected;
        await producer.send({
          topic,
          acks: -1,
          compression: CompressionTypes.None,
          timeout: options.ackTimeoutMs ?? 30_000,
          messages: batch.map((m) => ({ key: m.key, value: m.value })),
        });
      } catch (err) {
        // A failed connect must be retried on the next send, not cached.
        if (!(await isConnected(connected))) connected = null;
        const type = protocolErrorType(err);
        throw new DeliveryError(`kafka produce to ${topic} failed: ${errorMessage(err)}`, {
          retryable: type === undefined || !NON_RETRYABLE.has(type),
          cause: err,
        });
      }
    },
    async close() {
      if (connected && (await isConnected(connected))) await producer.disconnect();
      connected = null;
    },
  };
}

function clientFrom(options: KafkaTransportOptions): Kafka {
  if (!options.brokers?.length) throw new TypeError('createKafkaTransport needs a kafka client or a non-empty brokers list');
  return createKafka({
    brokers: options.brokers,
    clientId: options.clientId ?? 'tool-audit-emitter',
    logger: options.logger ?? noopLogger,
  });
}

async function isConnected(p: Promise<void> | null): Promise<boolean> {
  if (!p) return false;
  return p.then(
    () => true,
    () => false,
  );
}

/** The Kafka protocol error type (e.g. MESSAGE_TOO_LARGE) behind kafkajs' wrappers, if any. */
function protocolErrorType(err: unknown): string | undefined {
  let e = err as { type?: unknown; cause?: unknown; originalError?: unknown } | undefined;
  for (let depth = 0; e && depth < 5; depth++) {
    if (typeof e.type === 'string') return e.type;
    e = (e.cause ?? e.originalError) as typeof e;
  }
  return undefined;
}
