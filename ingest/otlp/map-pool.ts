/**
 * Threads that decode and map OTLP trace requests (map-traces.ts) beside the main thread. An
 * agent's export is mostly spans to peek at and skip; read on the main thread, the requests of
 * concurrent exporters took turns there while ClickHouse waited for the next round (measured on
 * the trace-heavy workload of `npm run bench:otlp`). In threads they are read side by side.
 */
import { createThreadPool, type PoolAnswer, type ThreadPool } from '../../platform/thread-pool.ts';
import type { SpanMapOptions } from './span-map.ts';
import type { MappedTraces, TraceEncoding } from './map-traces.ts';

/** Sent to a map thread: the body's bytes are transferred. */
export interface MapJob {
  id: number;
  body: ArrayBuffer;
  as: TraceEncoding;
}

/** A map thread's answer. */
export type MapAnswer = PoolAnswer & { mapped: MappedTraces };

/** Maps request bodies in threads. */
export interface TraceMapper {
  map(body: Uint8Array, as: TraceEncoding): Promise<MappedTraces>;
  close(): Promise<void>;
}

const ENTRY = new URL('./map-worker-entry.mjs', import.meta.url);

/**
 * `threads` map threads with the mapping's settings, started at the first request: a process that
 * receives no traces never pays for them (each thread loads the sources, seconds of CPU at start
 * beside everything else starting). They do not keep the process alive.
 */
export function createTraceMapPool(threads: number, opts: SpanMapOptions): TraceMapper {
  let pool: ThreadPool<MapJob, MapAnswer> | undefined;
  return {
    async map(body, as) {
      pool ??= createThreadPool<MapJob, MapAnswer>('OTLP map', ENTRY, threads, { opts });
      // A copy the thread may own: the request's buffer may be a slice of a pooled one.
      const owned = new Uint8Array(body.byteLength);
      owned.set(body);
      return (await pool.run({ body: owned.buffer, as }, [owned.buffer])).mapped;
    },
    close: async () => {
      await pool?.close();
    },
  };
}
