/**
 * A decode thread (see decode-pool.ts): receives batches as one buffer of packet bytes, decodes
 * them with the same code as the main thread (decode-batch.ts) and sends back the items and the
 * line buffers, whose memory is transferred, not copied.
 */
import { parentPort } from 'node:worker_threads';
import { decodeItems, type BatchBuffers, type Item } from './decode-batch.ts';
import type { DecodeJob, DecodeResult } from './decode-pool.ts';

const port = parentPort;
if (!port) throw new Error('decode-worker.ts runs as a worker thread');

port.on('message', (job: DecodeJob) => {
  try {
    const bytes = Buffer.from(job.bytes);
    const items: Item[] = new Array(job.sources.length);
    const buffers: BatchBuffers = {};
    decodeItems(
      (i) => {
        const start = i === 0 ? 0 : (job.ends[i - 1] as number);
        const end = job.ends[i] as number;
        const declared = job.declared[i] as number;
        return { raw: bytes.toString('utf8', start, end), bytes: declared >= 0 ? declared : end - start, source: job.sources[i] as string };
      },
      0,
      job.sources.length,
      items,
      buffers,
      job.maxPacketBytes,
    );
    const out: DecodeResult = { id: job.id, items, buffers: {} };
    const transfer: ArrayBuffer[] = [];
    for (const [kind, lb] of Object.entries(buffers)) {
      out.buffers[kind as keyof BatchBuffers] = { bytes: lb.buf.buffer as ArrayBuffer, offset: lb.buf.byteOffset, length: lb.length };
      transfer.push(lb.buf.buffer as ArrayBuffer);
    }
    port.postMessage(out, transfer);
  } catch (err) {
    port.postMessage({ id: job.id, error: (err as Error).stack ?? String(err) });
  }
});
