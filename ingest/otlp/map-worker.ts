/** A map thread (see map-pool.ts): decodes and maps each request body it is sent. */
import { parentPort, workerData } from 'node:worker_threads';
import { mapTraces } from './map-traces.ts';
import type { MapAnswer, MapJob } from './map-pool.ts';
import type { SpanMapOptions } from './span-map.ts';

const port = parentPort;
if (!port) throw new Error('map-worker.ts runs as a worker thread');
const { opts } = workerData as { opts: SpanMapOptions };

port.on('message', (job: MapJob) => {
  let answer: MapAnswer;
  try {
    answer = { id: job.id, mapped: mapTraces(new Uint8Array(job.body), job.as, opts) };
  } catch (err) {
    answer = { id: job.id, mapped: { ok: false, error: 'unmapped' }, error: (err as Error).stack ?? String(err) };
  }
  port.postMessage(answer);
});
