/**
 * The read load of `npm run bench:history`: one client, on a thread of its own
 * (bench/http-client-worker.mjs: node:http, one keep-alive connection, timed from the request to
 * the last byte), sends the four requests of a dashboard in turn, one at a time, for the whole
 * window, while serve's jobs catch up and its ingest runs.
 */
import { Worker } from 'node:worker_threads';
import { percentiles } from '../stats.ts';

/** Latencies of one endpoint over the window. */
export interface EndpointResult {
  name: string;
  n: number;
  errors: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** First error messages (non-200 answers, broken connections). */
  errorSamples: string[];
}

/** A request of the mix: its name and the URL of its i-th call. */
interface Endpoint {
  name: string;
  url(i: number): string;
}

/** The mix: task view (tasks spread over the history), tools table, task list, cache simulation (every tool, the manifest's TTLs, default window). */
export function endpoints(taskIds: string[]): Endpoint[] {
  return [
    { name: 'task view  GET /v1/tasks/{id}', url: (i) => `/v1/tasks/${taskIds[i % taskIds.length]}` },
    { name: 'tools table  GET /v1/tools', url: () => '/v1/tools' },
    { name: 'task list  GET /v1/tasks?limit=50', url: () => '/v1/tasks?limit=50' },
    { name: 'cache simulation  GET /v1/cache/simulation', url: () => '/v1/cache/simulation' },
  ];
}

/** One request's answer: when it ended (wall clock, epoch ms) and how long it took. */
export interface LoadSample {
  endpoint: string;
  atMs: number;
  ms: number;
  error?: string;
}

/** Latency figures of some requests of one endpoint. */
export function summarize(name: string, t: number[], e: string[]): EndpointResult {
  return { name, n: t.length, errors: e.length, ...percentiles(t), max: t.length ? Math.max(...t) : NaN, errorSamples: [...new Set(e.map((x) => x.slice(0, 200)))].slice(0, 3) };
}

/** The figures of each endpoint over the samples that ended at or after `fromMs` (wall clock). */
export function loadSince(samples: readonly LoadSample[], fromMs: number): EndpointResult[] {
  const names = [...new Set(samples.map((x) => x.endpoint))];
  return names.map((name) => {
    const mine = samples.filter((x) => x.endpoint === name && x.atMs >= fromMs);
    return summarize(name, mine.map((x) => x.ms), mine.flatMap((x) => (x.error === undefined ? [] : [x.error])));
  });
}

/**
 * Runs the mix round-robin, sequentially, until `untilMs` (performance.now()); `stop()` ends it
 * early. Every request is also handed to `onSample` (the report splits the window by it).
 */
export async function runLoad(base: string, key: string, taskIds: string[], untilMs: number, shouldStop: () => boolean, onSample?: (s: LoadSample) => void): Promise<EndpointResult[]> {
  const worker = new Worker(new URL('../http-client-worker.mjs', import.meta.url), { workerData: { base, key } });
  const pending = new Map<number, (m: { ms?: number; error?: string }) => void>();
  worker.on('message', (m: { id: number; ms?: number; error?: string }) => {
    pending.get(m.id)?.(m);
    pending.delete(m.id);
  });
  let next = 0;
  const get = (url: string) =>
    new Promise<{ ms?: number; error?: string }>((resolve) => {
      const id = next++;
      pending.set(id, resolve);
      worker.postMessage({ id, url });
    });
  const eps = endpoints(taskIds);
  const times = eps.map(() => [] as number[]);
  const errors = eps.map(() => [] as string[]);
  for (let i = 0; performance.now() < untilMs && !shouldStop(); i++) {
    const k = i % eps.length;
    const ep = eps[k] as Endpoint;
    const t0 = performance.now();
    const r = await get(ep.url(Math.floor(i / eps.length)));
    // A failed request counts with its time too: a 503 after 30 s is what the user waited.
    const took = r.ms ?? performance.now() - t0;
    (times[k] as number[]).push(took);
    if (r.error !== undefined) (errors[k] as string[]).push(r.error);
    onSample?.({ endpoint: ep.name, atMs: Date.now(), ms: took, ...(r.error === undefined ? {} : { error: r.error }) });
  }
  await worker.terminate();
  return eps.map((ep, k) => summarize(ep.name, times[k] as number[], errors[k] as string[]));
}
