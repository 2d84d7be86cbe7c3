/**
 * What the emitter's packet buffer is tuned with and what it reports: part of the emitter's
 * public options and stats.
 */

/** Tuning of a packet buffer (buffer.ts); every field has a default. */
export interface BufferOptions {
  /** Packets held at most (queued, serialized or in flight); default 10 000. */
  maxBuffered?: number;
  /** Packets per batch at most; a full batch is sent without waiting for lingerMs. Default 500. */
  maxBatchPackets?: number;
  /** Bytes per batch at most (a single larger packet goes alone); default 512 KiB, under Kafka's 1 MB. */
  maxBatchBytes?: number;
  /** How long the first packet after an idle spell waits for company; default 50 ms. */
  lingerMs?: number;
  /** First retry delay; doubles per failed attempt up to retryMaxMs. Default 100 ms. */
  retryBaseMs?: number;
  /** Longest retry delay; default 10 000 ms. */
  retryMaxMs?: number;
  /** Attempts per batch before it is given up; default unlimited (the bound on memory is maxBuffered). */
  maxAttempts?: number;
  /** When full: discard the new packet (default) or the oldest one not yet serialized. */
  overflow?: 'drop-newest' | 'drop-oldest';
  /** Default deadline of flush() and close(); default 5 000 ms. */
  closeTimeoutMs?: number;
}

/** Counters of a buffer. enqueued = delivered + rejected + dropped + buffered, always. */
export interface BufferStats {
  /** Packets offered to the buffer. */
  enqueued: number;
  /** Packets the sink took. */
  delivered: number;
  /** Packets the sink refused (HTTP per-packet rejections; quarantined server-side). */
  rejected: number;
  /** Packets not delivered: overflow, a batch given up, or still held when close() hit its deadline. */
  dropped: number;
  /** Failed send attempts (a batch retried three times counts three). */
  failedBatches: number;
  /** Packets held now. */
  buffered: number;
}
