/**
 * Worker threads that each answer jobs posted to them, round robin. A thread that dies fails the
 * jobs it held with a retryable error and is replaced; the threads never keep the process alive.
 * The job and answer protocol is the caller's: each message carries an `id`, and an answer with
 * `error` set fails its job (a bug in the thread: not retryable).
 */
import { Worker, type TransferListItem } from 'node:worker_threads';
import { AppError } from './errors.ts';

/** What every answer carries. */
export interface PoolAnswer {
  id: number;
  error?: string;
}

/** Threads running jobs of type J that answer A. */
export interface ThreadPool<J, A extends PoolAnswer> {
  /** Posts the job (its `id` set here) to the next thread; `transfer` moves buffers instead of copying them. */
  run(job: Omit<J, 'id'>, transfer?: readonly TransferListItem[]): Promise<A>;
  close(): Promise<void>;
}

/**
 * Starts `threads` (at least one) threads of `entry`, a module that answers each message it gets.
 * `name` names the pool in errors.
 */
export function createThreadPool<J, A extends PoolAnswer>(name: string, entry: URL, threads: number, workerData?: unknown): ThreadPool<J, A> {
  type Pending = { resolve: (a: A) => void; reject: (e: unknown) => void; worker: number };
  const pending = new Map<number, Pending>();
  const workers: Worker[] = [];
  let nextId = 1;
  let turn = 0;
  let closed = false;

  const start = (n: number): Worker => {
    const w = new Worker(entry, { workerData });
    w.unref();
    w.on('message', (a: A) => {
      const p = pending.get(a.id);
      if (!p) return;
      pending.delete(a.id);
      if (a.error !== undefined) p.reject(new AppError('INTERNAL', `${name} thread failed: ${a.error}`, { retryable: false }));
      else p.resolve(a);
    });
    const fail = (err: unknown) => {
      // A thread that died takes its jobs with it; they may be retried (a fresh thread starts).
      for (const [id, p] of pending) {
        if (p.worker !== n) continue;
        pending.delete(id);
        p.reject(new AppError('INTERNAL', `${name} thread stopped: ${(err as Error)?.message ?? String(err)}`, { retryable: true, cause: err }));
      }
      if (!closed) workers[n] = start(n);
    };
    w.on('error', fail);
    w.on('exit', (code) => {
      if (!closed) fail(new Error(`exit code ${code}`));
    });
    return w;
  };
  for (let n = 0; n < Math.max(1, threads); n++) workers.push(start(n));

  return {
    run(job, transfer) {
      const id = nextId++;
      const n = turn++ % workers.length;
      return new Promise<A>((resolve, reject) => {
        pending.set(id, { resolve, reject, worker: n });
        (workers[n] as Worker).postMessage({ ...job, id }, transfer ?? []);
      });
    },
    async close() {
      closed = true;
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
