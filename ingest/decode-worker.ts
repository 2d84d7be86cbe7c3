/**
 * A decode thread (see decode-pool.ts): receives batches as one buffer of packet bytes, decodes
 * them with the same code as the main thread (decode-batch.ts) and sends back the columns and
 * the line buffers; typed arrays and buffers are transferred, not copied.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Redactor, type RedactionPolicy } from '../schemas/redaction-policy.ts';
import { ColumnsBuilder, type BatchBuffers } from './decode-batch.ts';
import { ENCODING_CODES, type DecodeJob, type DecodeResult } from './decode-pool.ts';

const port = parentPort;
if (!port) throw new Error('decode-worker.ts runs as a worker thread');
const policy = (workerData as { redaction?: RedactionPolicy } | null)?.redaction;
const redactor = policy ? new Redactor(policy) : undefined;

port.on('message', (job: DecodeJob) => {
  try {
    const bytes = Buffer.from(job.bytes);
    const n = job.sources.length;
    const cols = new ColumnsBuilder(n, redactor);
    const buffers: BatchBuffers = {};
    let start = 0;
    for (let i = 0; i < n; i++) {
      const end = job.ends[i] as number;
      const declared = job.declared[i] as number;
      const encoding = ENCODING_CODES[job.encodings[i] as number] ?? 'utf8';
      cols.decode(i, bytes.toString('utf8', start, end), declared >= 0 ? declared : end - start, job.sources[i] as string, job.maxPacketBytes, buffers, encoding);
      start = end;
    }
    const columns = cols.finish();
    const out: DecodeResult = { id: job.id, columns, buffers: {} };
    const transfer: ArrayBuffer[] = [columns.kind, columns.start, columns.end, columns.cStart, columns.cEnd, columns.textAt].map((a) => a.buffer as ArrayBuffer);
    for (const [kind, lb] of Object.entries(buffers)) {
      out.buffers[kind as keyof BatchBuffers] = { bytes: lb.buf.buffer as ArrayBuffer, offset: lb.buf.byteOffset, length: lb.length };
      transfer.push(lb.buf.buffer as ArrayBuffer);
    }
    port.postMessage(out, transfer);
  } catch (err) {
    port.postMessage({ id: job.id, error: (err as Error).stack ?? String(err) });
  }
});
