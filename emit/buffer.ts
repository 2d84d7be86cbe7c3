/**
 * The emitter's bounded in-memory queue and its background flusher. `push` is O(1) and never
 * waits or throws, whatever the sink is doing; packets are serialized here, in the
 * background, one batch at a time. One batch is in flight at a time and a failed batch is
 * retried as a whole before anything behind it, so packets with the same key reach the sink
 * in the order they were pushed.
 */
import type { MinimalLogger } from '../platform/minimal-logger.ts';
import { errorMessage } from '../platform/errors.ts';
import { Ring } from './ring.ts';
import type { BufferOptions, BufferStats } from './buffer-options.ts';
import { isRetryableDelivery, type PacketTransport, type SendReceipt, type TransportMessage } from './transport.ts';

interface Batch {
  messages: TransportMessage[];
  attempts: number;
}

/** Bounded queue + background flusher in front of a {@link PacketTransport}. */
export class PacketBuffer<T> {
  private readonly opts: Required<BufferOptions>;
  private readonly ring: Ring<T>;
  /** A serialized packet that did not fit the previous batch; it starts the next one. */
  private carry: TransportMessage | null = null;
  private inFlight: Batch | null = null;
  private pumping = false;
  private closed = false;
  /** Set when close() gave up: nothing more is sent or counted. */
  private halted = false;
  private closing: Promise<void> | null = null;
  private lingerTimer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private cancelSleep: (() => void) | null = null;
  /** flush() callers waiting for the buffer to empty; told true when it did, false when close() gave up. */
  private readonly idleWaiters = new Set<(drained: boolean) => void>();
  private dropping = false;
  private readonly counts = { enqueued: 0, delivered: 0, rejected: 0, dropped: 0, failedBatches: 0 };

  /**
   * @param encode serializes one queued item into a packet; called in the background.
   */
  constructor(
    private readonly transport: PacketTransport,
    private readonly encode: (item: T) => string,
    options: BufferOptions = {},
    private readonly logger?: MinimalLogger,
  ) {
    this.opts = {
      maxBuffered: Math.max(1, options.maxBuffered ?? 10_000),
      maxBatchPackets: Math.max(1, options.maxBatchPackets ?? 500),
      maxBatchBytes: Math.max(1, options.maxBatchBytes ?? 512 * 1024),
      lingerMs: Math.max(0, options.lingerMs ?? 50),
      retryBaseMs: Math.max(1, options.retryBaseMs ?? 100),
      retryMaxMs: Math.max(1, options.retryMaxMs ?? 10_000),
      maxAttempts: Math.max(1, options.maxAttempts ?? Infinity),
      overflow: options.overflow ?? 'drop-newest',
      closeTimeoutMs: Math.max(0, options.closeTimeoutMs ?? 5_000),
    };
    this.ring = new Ring<T>(this.opts.maxBuffered);
  }

  /** Queues one packet. O(1); never waits, never throws. */
  push(key: string, item: T): void {
    this.counts.enqueued++;
    if (this.closed) {
      this.drop(1, 'the emitter is closed');
      return;
    }
    if (this.held() >= this.opts.maxBuffered) {
      if (this.opts.overflow === 'drop-newest' || this.ring.size === 0) {
        this.drop(1, 'the buffer is full');
        return;
      }
      this.ring.shift();
      this.drop(1, 'the buffer is full');
    }
    this.ring.push(key, item);
    if (!this.pumping) this.schedule(this.ring.size >= this.opts.maxBatchPackets);
  }

  /** Sends everything held now; true when the buffer emptied before the deadline. */
  flush(timeoutMs = this.opts.closeTimeoutMs): Promise<boolean> {
    if (this.halted) return Promise.resolve(false);
    if (this.held() === 0) return Promise.resolve(true);
    // Skip the linger: whoever flushes wants the packets out now.
    if (!this.pumping) this.wake();
    return new Promise((resolve) => {
      const waiter = (drained: boolean): void => {
        clearTimeout(timer);
        this.idleWaiters.delete(waiter);
        resolve(drained);
      };
      const timer = setTimeout(() => waiter(false), timeoutMs);
      this.idleWaiters.add(waiter);
    });
  }

  /**
   * Stops taking packets, flushes until the deadline, counts whatever is still held as
   * dropped, then closes the transport (also bounded by the deadline). Idempotent.
   */
  close(timeoutMs = this.opts.closeTimeoutMs): Promise<void> {
    this.closing ??= this.shutdown(timeoutMs);
    return this.closing;
  }

  /** Current counters. */
  stats(): BufferStats {
    return { ...this.counts, buffered: this.held() };
  }

  private async shutdown(timeoutMs: number): Promise<void> {
    this.closed = true;
    const deadline = Date.now() + timeoutMs;
    if (!(await this.flush(timeoutMs))) {
      const left = this.held();
      this.halt();
      this.logger?.warn({ undelivered: left }, 'audit emitter closed with packets it could not deliver');
    }
    let timer: NodeJS.Timeout | undefined;
    const deadlineHit = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    });
    // A hung sink must not hold close() past its deadline.
    await Promise.race([
      this.transport.close().catch((err: unknown) => this.logger?.warn({ err: errorMessage(err) }, 'audit transport close failed')),
      deadlineHit,
    ]);
    clearTimeout(timer);
  }

  private held(): number {
    return this.ring.size + (this.carry ? 1 : 0) + (this.inFlight?.messages.length ?? 0);
  }

  private schedule(now: boolean): void {
    if (this.immediate) return;
    if (now) {
      this.immediate = setImmediate(() => this.wake());
    } else if (!this.lingerTimer) {
      this.lingerTimer = setTimeout(() => this.wake(), this.opts.lingerMs);
    }
  }

  private wake(): void {
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    if (this.immediate) clearImmediate(this.immediate);
    this.lingerTimer = null;
    this.immediate = null;
    if (!this.pumping && !this.halted) void this.pump();
  }

  /** The flusher: sends batches one after the other until nothing is held. */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      for (;;) {
        const batch = this.inFlight ?? this.takeBatch();
        if (!batch || this.halted) return;
        this.inFlight = batch;
        let receipt: void | SendReceipt;
        try {
          receipt = await this.transport.send(batch.messages);
        } catch (err) {
          if (this.halted) return;
          await this.failed(batch, err);
          continue;
        }
        // close() gave up on this batch and counted it as dropped already.
        if (this.halted) return;
        this.inFlight = null;
        this.delivered(batch, receipt);
      }
    } finally {
      this.pumping = false;
      if (this.held() === 0 && !this.halted) this.notifyWaiters(true);
    }
  }

  private takeBatch(): Batch | null {
    const messages: TransportMessage[] = [];
    let bytes = 0;
    while (messages.length < this.opts.maxBatchPackets) {
      let message = this.carry;
      this.carry = null;
      if (!message) {
        if (this.ring.size === 0) break;
        const { key, item } = this.ring.shift();
        try {
          message = { key, value: this.encode(item) };
        } catch (err) {
          // A bug in a builder must cost one packet, not the flusher.
          this.drop(1, `a packet could not be serialized: ${errorMessage(err)}`);
          continue;
        }
      }
      const size = Buffer.byteLength(message.value) + Buffer.byteLength(message.key);
      if (messages.length > 0 && bytes + size > this.opts.maxBatchBytes) {
        this.carry = message;
        break;
      }
      messages.push(message);
      bytes += size;
    }
    return messages.length > 0 ? { messages, attempts: 0 } : null;
  }

  private delivered(batch: Batch, receipt: void | SendReceipt): void {
    const rejected = Math.min(batch.messages.length, Math.max(0, receipt?.rejected ?? 0));
    this.counts.delivered += batch.messages.length - rejected;
    this.counts.rejected += rejected;
    this.dropping = false;
    if (rejected > 0) {
      this.logger?.warn({ rejected, reasons: receipt?.reasons?.slice(0, 5) }, 'the audit sink rejected packets (quarantined there)');
    }
  }

  private async failed(batch: Batch, err: unknown): Promise<void> {
    this.counts.failedBatches++;
    batch.attempts++;
    const packets = batch.messages.length;
    if (!isRetryableDelivery(err) || batch.attempts >= this.opts.maxAttempts) {
      this.inFlight = null;
      this.drop(packets, `batch given up after ${batch.attempts} attempt(s): ${errorMessage(err)}`, true);
      return;
    }
    // Exponential backoff with jitter, so many emitters do not hammer a recovering sink in step.
    const ceiling = Math.min(this.opts.retryMaxMs, this.opts.retryBaseMs * 2 ** (batch.attempts - 1));
    const delay = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    this.logger?.warn({ err: errorMessage(err), packets, attempt: batch.attempts, retryInMs: delay }, 'audit batch delivery failed; retrying');
    await new Promise<void>((resolve) => {
      // Unref'd: a sink that is down must not keep the process alive; close() bounds the wait.
      const timer = setTimeout(resolve, delay);
      timer.unref();
      this.cancelSleep = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.cancelSleep = null;
  }

  /** Gives up on everything held: the close deadline passed. */
  private halt(): void {
    const left = this.held();
    this.halted = true;
    this.ring.clear();
    this.carry = null;
    this.inFlight = null;
    this.counts.dropped += left;
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    if (this.immediate) clearImmediate(this.immediate);
    this.cancelSleep?.();
    this.notifyWaiters(false);
  }

  private notifyWaiters(drained: boolean): void {
    for (const waiter of [...this.idleWaiters]) waiter(drained);
  }

  private drop(n: number, why: string, always = false): void {
    this.counts.dropped += n;
    // Log the first drop of a spell (and every given-up batch), not every packet of an outage.
    if (this.dropping && !always) return;
    this.dropping = true;
    this.logger?.warn({ dropped: n, totalDropped: this.counts.dropped }, `audit packets dropped: ${why}`);
  }
}
