/**
 * The budget thread (main side): a {@link DeskHandle} whose desk lives on a worker thread of its
 * own. `serve` uses it so a check is decided on a thread with a small heap and nothing else to
 * do; with a listen address the thread also serves `POST /v1/budget/check` itself
 * (BUDGET_CHECK_PORT, api/budgets/check-listener.ts). Checks on the main port reach the same desk
 * through a message round trip, so there is one ledger per process whichever door a check uses.
 */
import type { EdgeLimitOptions } from '../edge-limits.ts';
import { Worker } from 'node:worker_threads';
import type { StoredCall } from '../../ingest/ports.ts';
import type { ApiKey } from '../../platform/config.ts';
import type { KeyedRow } from '../../platform/clickhouse/door.ts';
import { AppError } from '../../platform/errors.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Budget } from '../../queries/budgets/math.ts';
import type { BudgetCheckAnswer, BudgetCheckRequest, BudgetList } from '../../queries/budgets/schemas.ts';
import type { DeskHandle, DeskState } from './desk.ts';

/** What the thread is started with (its workerData). */
export interface ThreadOptions {
  reservationTimeoutMs: number;
  /** How long the ids a spend load counted are skipped (BudgetLedger.setBudgets). */
  seenForMs?: number;
  apiKeys: ApiKey[];
  maxBodyBytes: number;
  /** Serve checks on this address too (port 0 = any free port); absent = main port only. */
  listen?: { host: string; port: number };
  /** The edge's limits on that listener, as on the main port (config.edgeLimits); absent: none. */
  edgeLimits?: EdgeLimitOptions;
}

/** A request to the thread, answered by one {@link ThreadReply} of op 'answer' with the same id. */
export type ThreadRequest =
  | { op: 'begin'; id: number; budgets: Budget[] }
  | { op: 'cancel'; id: number }
  | { op: 'load'; id: number; state: DeskState }
  | { op: 'set'; id: number; state: DeskState }
  | { op: 'check'; id: number; req: BudgetCheckRequest; keyId: string }
  | { op: 'list'; id: number }
  | { op: 'take'; id: number }
  | { op: 'stop'; id: number };

/** A message to the thread that wants no answer: calls the writer stored. */
export type ThreadNote = { op: 'calls'; calls: StoredCall[] };

/** What the thread posts: an answer, or word that decisions wait to be taken. */
export type ThreadReply = { op: 'answer'; id: number; value?: unknown; error?: string } | { op: 'decided' };

/** A desk handle on a thread, and the port its check listener took (null without one). */
export interface ThreadDesk extends DeskHandle {
  checkPort(): number | null;
  /** Not ok once the thread has died (or was closed): budget checks then fail, so the process is not ready. */
  health(): { ok: boolean; detail?: string };
}

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };
type Op = ThreadRequest['op'];
type Without<T> = T extends unknown ? Omit<T, 'id' | 'op'> : never;

const ENTRY = new URL('./thread-entry.mjs', import.meta.url);

/** Starts the budget thread. Its desk is empty until load(). */
export function createThreadDesk(options: ThreadOptions, logger: Logger): ThreadDesk {
  const worker = new Worker(ENTRY, { workerData: options });
  // The process ends with its main thread: serve closes the thread on shutdown, nothing waits on it.
  worker.unref();
  const pending = new Map<number, Pending>();
  let seq = 0;
  let failure: AppError | undefined;
  let decided = (): void => {};
  let port: number | null = null;

  const fail = (why: string): void => {
    failure ??= new AppError('INTERNAL', `budget thread stopped: ${why}`, { retryable: false });
    for (const p of pending.values()) p.reject(failure);
    pending.clear();
  };
  worker.on('message', (m: ThreadReply) => {
    if (m.op === 'decided') return decided();
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error !== undefined) p.reject(new AppError('INTERNAL', `budget thread: ${m.error}`, { retryable: false }));
    else p.resolve(m.value);
  });
  worker.on('error', (err) => {
    logger.error({ err: err.message }, 'budget thread failed');
    fail(err.message);
  });
  worker.on('exit', (code) => fail(`exited with code ${code}`));

  const ask = <T>(op: Op, body: Without<ThreadRequest> = {} as Without<ThreadRequest>): Promise<T> => {
    if (failure) return Promise.reject(failure);
    const id = ++seq;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...body, op, id });
    });
  };

  return {
    async load(state) {
      ({ port } = await ask<{ port: number | null }>('load', { state }));
    },
    beginLoad: (budgets) => ask<Budget[]>('begin', { budgets }),
    cancelLoad: () => ask<void>('cancel'),
    setBudgets: (state) => ask<void>('set', { state }),
    check: (req, keyId) => ask<BudgetCheckAnswer>('check', { req, keyId }),
    list: () => ask<BudgetList>('list'),
    recordCalls(calls: StoredCall[]) {
      if (!failure && calls.length > 0) worker.postMessage({ op: 'calls', calls } satisfies ThreadNote);
    },
    takeDecisions: () => (failure ? Promise.resolve([]) : ask<KeyedRow[]>('take')),
    onDecided: (l) => void (decided = l),
    checkPort: () => port,
    health: () => (failure ? { ok: false, detail: failure.message } : { ok: true }),
    stop: () => (failure ? Promise.resolve() : ask<void>('stop')),
    async close() {
      failure ??= new AppError('SHUTTING_DOWN', 'the budget thread is closed', { retryable: false });
      await worker.terminate();
    },
  };
}
