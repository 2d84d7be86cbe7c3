/**
 * Decode threads for the segment writer. Decoding (JSON, the MUST rules, hashes, fingerprints,
 * row serialization) is most of the CPU an ingest process spends; in threads of its own it runs
 * beside the main thread's Kafka client and commit rounds instead of taking turns with them.
 *
 * A batch travels as one buffer of its packets' UTF-8 bytes (copied once; Kafka packets are
 * not even turned into strings on the main thread) and comes back as line
 * buffers whose memory is transferred, and columns (decode-batch.ts).
 */
import { createThreadPool } from '../platform/thread-pool.ts';
import type { RedactionPolicy } from '../schemas/redaction-policy.ts';
import type { BatchBuffers, Columns, LineKind } from './decode-batch.ts';
import type { RawEncoding } from './ports.ts';
import { sourceKey, type RawPacket } from './rows.ts';
import { LineBuffer } from './row-lines.ts';

/** Sent to a decode thread. */
export interface DecodeJob {
  id: number;
  maxPacketBytes: number;
  /** Packet bytes back to back; packet i ends at ends[i]. */
  bytes: ArrayBuffer;
  ends: Int32Array;
  /** Declared size per packet (-1: its byte length). */
  declared: Float64Array;
  sources: string[];
  /** Encoding per packet, as ENCODING_CODES (0 = utf8). */
  encodings: Uint8Array;
}

/** {@link RawEncoding}s as they travel to a decode thread. */
export const ENCODING_CODES: readonly RawEncoding[] = ['utf8', 'base64', 'none'];

/** Sent back by a decode thread. */
export interface DecodeResult {
  id: number;
  columns: Columns;
  buffers: Partial<Record<LineKind, { bytes: ArrayBuffer; offset: number; length: number }>>;
  error?: string;
}

/** Decodes batches in threads, in any number concurrently; results keep no order of their own. */
export interface DecodePool {
  decode(batch: RawPacket[], maxPacketBytes: number): Promise<{ columns: Columns; buffers: BatchBuffers }>;
  close(): Promise<void>;
}

const ENTRY = new URL('./decode-worker-entry.mjs', import.meta.url);

/** Starts `threads` decode threads; they do not keep the process alive. */
export function createDecodePool(threads: number, redaction?: RedactionPolicy): DecodePool {
  const pool = createThreadPool<DecodeJob, DecodeResult>('decode', ENTRY, threads, { redaction });
  return {
    decode(batch, maxPacketBytes) {
      let total = 0;
      const views: Uint8Array[] = new Array(batch.length);
      for (let i = 0; i < batch.length; i++) {
        const p = batch[i] as RawPacket;
        const v = p.rawBytes ?? Buffer.from(p.raw, 'utf8');
        views[i] = v;
        total += v.byteLength;
      }
      const bytes = Buffer.allocUnsafeSlow(total);
      const ends = new Int32Array(batch.length);
      const declared = new Float64Array(batch.length);
      const sources: string[] = new Array(batch.length);
      const encodings = new Uint8Array(batch.length);
      let at = 0;
      for (let i = 0; i < batch.length; i++) {
        const p = batch[i] as RawPacket;
        const v = views[i] as Uint8Array;
        bytes.set(v, at);
        at += v.byteLength;
        ends[i] = at;
        declared[i] = p.bytes ?? -1;
        sources[i] = sourceKey(p.source);
        encodings[i] = ENCODING_CODES.indexOf(p.encoding ?? 'utf8');
      }
      const job: Omit<DecodeJob, 'id'> = { maxPacketBytes, bytes: bytes.buffer as ArrayBuffer, ends, declared, sources, encodings };
      return pool.run(job, [job.bytes]).then((r) => {
        const buffers: BatchBuffers = {};
        for (const [kind, b] of Object.entries(r.buffers)) {
          buffers[kind as LineKind] = new LineBuffer(0, { buf: Buffer.from(b.bytes, b.offset, b.length), length: b.length });
        }
        return { columns: r.columns, buffers };
      });
    },
    close: () => pool.close(),
  };
}
