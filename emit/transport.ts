/**
 * What the emitter's buffer delivers batches through. Two implementations ship (Kafka, HTTP);
 * the in-memory one here serves orchestrators' own tests and the SDK's.
 */

/** One serialized packet and its partition key (task_id, or call_id when the task is null). */
export interface TransportMessage {
  key: string;
  value: string;
}

/**
 * What a sink said about a batch it took. Only the HTTP sink can say that some packets were
 * rejected (quarantined on the server); retrying those would be rejected again, so they are
 * counted, not retried.
 */
export interface SendReceipt {
  /** How many packets of the batch the sink rejected. */
  rejected: number;
  /** The sink's reasons for the first few rejections, for the log. */
  reasons?: string[];
}

/**
 * A packet sink. `send` resolves once the whole batch is durable (or explicitly rejected) and
 * rejects when it is not; the buffer calls it for one batch at a time, so per-key order holds.
 */
export interface PacketTransport {
  send(batch: TransportMessage[]): Promise<void | SendReceipt>;
  close(): Promise<void>;
}

/**
 * A failed delivery. `retryable: false` tells the buffer that sending the same batch again
 * cannot succeed (a 400 or 413, a record Kafka refuses), so it is given up at once.
 */
export class DeliveryError extends Error {
  readonly retryable: boolean;

  constructor(message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DeliveryError';
    this.retryable = options.retryable;
  }
}

/** True unless the error says outright that retrying is pointless (DeliveryError, AppError). */
export function isRetryableDelivery(err: unknown): boolean {
  return (err as { retryable?: unknown } | null)?.retryable !== false;
}

/** An in-memory transport that keeps every batch it was sent. */
export interface MemoryTransport extends PacketTransport {
  /** The batches in the order they were sent. */
  readonly batches: TransportMessage[][];
  /** Every message of every batch, in order. */
  messages(): TransportMessage[];
  /** Every packet, parsed. */
  packets(): unknown[];
  readonly closed: boolean;
}

/** Creates a {@link MemoryTransport}. */
export function createMemoryTransport(): MemoryTransport {
  const batches: TransportMessage[][] = [];
  let closed = false;
  return {
    batches,
    get closed() {
      return closed;
    },
    send(batch) {
      // Copy, so what was recorded cannot change if the sender reuses its array.
      batches.push(batch.slice());
      return Promise.resolve();
    },
    close() {
      closed = true;
      return Promise.resolve();
    },
    messages: () => batches.flat(),
    packets: () => batches.flat().map((m) => JSON.parse(m.value) as unknown),
  };
}
