/**
 * A chunk that can never be written must not stop its partition. The worker fetches a
 * failed chunk again (a fault that may pass); after `maxAttempts` failures of the same chunk it
 * parks it instead: every packet's exact bytes go to the DLQ topic with the error as the reason,
 * and only once Kafka has them (acks from every in-sync replica) does the offset move past them.
 * If the DLQ refuses too, the chunk is fetched again as before: nothing is lost either way.
 * Pure: the worker (kafka-worker.ts) sends and commits.
 */
import { dlqRecord } from './kafka-records.ts';
import type { RawPacket } from './rows.ts';

/** The DLQ reason of a parked packet (header x-reason). */
export const UNWRITABLE = 'unwritable';
/** Failures of one chunk before it is parked, by default (INGEST_CHUNK_MAX_ATTEMPTS). */
export const DEFAULT_CHUNK_MAX_ATTEMPTS = 5;
const MAX_ERROR_HEADER = 1000;

/** The DLQ messages of a parked chunk: each packet's bytes, why, and where it came from. */
export function parkedMessages(packets: readonly RawPacket[], error: string): Array<{ value: string | Buffer | null; headers: Record<string, string> }> {
  return packets.map((p) => dlqRecord(p, { 'x-reason': UNWRITABLE, 'x-error': error.slice(0, MAX_ERROR_HEADER) }));
}

/** Failures per chunk (partition and first offset), forgotten once the chunk is written or parked. */
export class ChunkFailures {
  private readonly tries = new Map<string, number>();
  /** Chunks parked since start, and the last error: for readiness. */
  parked = 0;
  lastParked = '';

  constructor(private readonly maxAttempts: number) {}

  /** Counts a failure; true when the chunk has now failed maxAttempts times and is to be parked. */
  failed(partitionKey: string, firstOffset: string): boolean {
    const id = `${partitionKey}@${firstOffset}`;
    const n = (this.tries.get(id) ?? 0) + 1;
    this.tries.set(id, n);
    return n >= this.maxAttempts;
  }

  /** The chunk was written or parked: its count starts again if it ever fails anew. */
  settled(partitionKey: string, firstOffset: string): void {
    this.tries.delete(`${partitionKey}@${firstOffset}`);
  }

  /** Records a parked chunk. */
  recordParked(detail: string): void {
    this.parked++;
    this.lastParked = detail;
  }
}
