/**
 * The process watchdog: a thread of its own that ends the process (SIGKILL, so a non-zero
 * status) when the main thread stops beating for `timeoutMs`.
 *
 * Why a thread and not an exit handler: a fatal error of V8 (`Reached heap limit`) aborts the
 * process, and embedded ClickHouse (chDB) installs its own handler for SIGABRT, which leaves the
 * process alive and silent — holding the data directory, answering nothing — instead of letting
 * it die. The same holds for a native abort inside the engine, or a main thread stuck for good.
 * The watchdog thread has its own heap and event loop, so it still runs when the main thread
 * cannot, and a supervisor (systemd, Kubernetes, a shell loop) sees an exit it can act on.
 */
import { Worker } from 'node:worker_threads';

/** A started watchdog. */
export interface Watchdog {
  /** Stops watching (a clean shutdown that may block the main thread for a while). */
  stop(): Promise<void>;
}

// CommonJS text for an `eval` worker: no TypeScript loader is needed in the thread, and it
// stays tiny (its own isolate is a few MB).
const THREAD = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const beats = new Int32Array(workerData.beats);
let last = -1, since = Date.now();
setInterval(() => {
  const seen = Atomics.load(beats, 0);
  if (seen !== last) { last = seen; since = Date.now(); return; }
  if (Date.now() - since < workerData.timeoutMs) return;
  writeSync(2, JSON.stringify({ level: 60, time: Date.now(), name: workerData.name, msg: 'watchdog: the main thread has not answered for ' + (Date.now() - since) + ' ms (fatal error, abort or hang); ending the process' }) + '\\n');
  process.kill(process.pid, 'SIGKILL');
}, Math.max(50, Math.floor(workerData.timeoutMs / 10)));
`;

/**
 * Starts the watchdog of this process: the main thread beats every `timeoutMs / 10`; when the
 * watchdog thread sees no beat for `timeoutMs` it writes one JSON log line to stderr and kills
 * the process. `timeoutMs` 0 starts nothing.
 */
export function startWatchdog(opts: { timeoutMs: number; name: string }): Watchdog {
  if (opts.timeoutMs <= 0) return { stop: async () => {} };
  const beats = new Int32Array(new SharedArrayBuffer(4));
  const beat = setInterval(() => Atomics.add(beats, 0, 1), Math.max(20, Math.floor(opts.timeoutMs / 10)));
  beat.unref();
  const worker = new Worker(THREAD, { eval: true, workerData: { beats: beats.buffer, timeoutMs: opts.timeoutMs, name: opts.name } });
  // Never what keeps the process alive: it ends with its main thread.
  worker.unref();
  return {
    async stop() {
      clearInterval(beat);
      await worker.terminate();
    },
  };
}
