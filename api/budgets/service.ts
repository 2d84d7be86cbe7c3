/**
 * The budget service of an API process: the I/O around a {@link DeskHandle} (the one
 * ledger of the process, in this thread or on a thread of its own). At start it loads the newest
 * budget set and, only for its budgets, their spend in their current periods (one aggregate,
 * O(budgets) rows; nothing at all without budgets); a new set loads the budgets whose scope or
 * period changed the same way. The ingest writer of the same process keeps spend current
 * ({@link BudgetService.onCallsStored}); checks are answered by the desk without a query; every
 * decision is written to `budget_decisions`, batched off the check's path.
 *
 * Calls stored while a load runs: the desk holds every call reported from the moment the load
 * begins (before its statement is sent) and adds, at the switch, those the load did not count; the
 * load returns the ids of the calls it counted that ClickHouse stored within SPEND_LOAD_SEEN_MS
 * before it, and the desk skips their reports for as long after the switch. Exact unless a commit
 * round reports its calls more than SPEND_LOAD_SEEN_MS after storing them (then they count twice).
 */
import { claimVersion, type ClaimTables } from '../../analyzers/manifest-claims.ts';
import type { StoredCall } from '../../ingest/ports.ts';
import type { ClickHouseDoor, KeyedRow } from '../../platform/clickhouse/door.ts';
import type { Logger } from '../../platform/logger.ts';
import { NO_SPEND, SPEND_LOAD_SEEN_MS, type LoadedSpend } from '../../queries/budgets/ledger.ts';
import type { Budget } from '../../queries/budgets/math.ts';
import type { BudgetCheckAnswer, BudgetCheckRequest, BudgetList } from '../../queries/budgets/schemas.ts';
import { latestBudgetSet, loadBudgetSpend } from '../../queries/budgets/sql.ts';
import type { QueryContext } from '../../queries/sql.ts';
import { createLocalDesk, type DeskHandle } from './desk.ts';

/** Budget set versions: milliseconds since the epoch, claimed across processes. */
const BUDGET_CLAIMS: ClaimTables = { claims: 'budget_claims', versions: 'budget_versions', what: 'budget set', atLeastNow: true };

/** Options of {@link createBudgetService}. */
export interface BudgetServiceOptions {
  clickhouse: ClickHouseDoor;
  logger: Logger;
  ctx: QueryContext;
  reservationTimeoutMs: number;
  decisionsFlushMs: number;
  /** The clock (tests move it; a desk on another thread reads its own). */
  now?: () => number;
  /** Where checks are decided; default a desk in this thread on `now`. */
  desk?: DeskHandle;
  /** See SPEND_LOAD_SEEN_MS (the desk must skip for as long: a thread desk's ThreadOptions.seenForMs). */
  seenMs?: number;
}

/** Budgets of one process. */
export interface BudgetService {
  /** Loads the set in force and its budgets' spend from ClickHouse; call before the writer writes. */
  start(): Promise<void>;
  /** Stores a new version of the whole set and puts it in force; resolves with its version. */
  apply(budgets: Budget[], keyId: string): Promise<number>;
  /** Decides (and reserves, with a call_id) in one step; the decision is recorded in the background. */
  check(req: BudgetCheckRequest, keyId: string): Promise<BudgetCheckAnswer>;
  /** Every budget with its current-period figures. */
  list(): Promise<BudgetList>;
  /** The ingest writer's port (ports.ts CallsStoredListener). */
  onCallsStored(calls: StoredCall[]): void;
  /** Writes the decisions recorded so far. */
  flush(): Promise<void>;
  /** Flushes, stops the timer and closes the desk. */
  close(): Promise<void>;
}

/** Decisions held while ClickHouse refuses them; beyond this the oldest are dropped (and logged). */
const MAX_PENDING_DECISIONS = 100_000;

/** A budget service over a database (nothing loaded until start()). */
export function createBudgetService(o: BudgetServiceOptions): BudgetService {
  const now = o.now ?? Date.now;
  const seenMs = o.seenMs ?? SPEND_LOAD_SEEN_MS;
  const desk = o.desk ?? createLocalDesk(o.reservationTimeoutMs, now, seenMs);
  // One load at a time: the desk holds one buffer of calls stored during a load.
  let loads: Promise<unknown> = Promise.resolve();
  let version: number | null = null;
  const recorder = createDecisionRecorder(desk, o);

  /** Reads the spend of the budgets of `budgets` the desk does not keep, then `install`s; a failure leaves the set in force. */
  const loadThen = <T>(budgets: Budget[], install: (loaded: LoadedSpend, read: number) => Promise<T>): Promise<T> => {
    const run = async (): Promise<T> => {
      const toLoad = await desk.beginLoad(budgets);
      try {
        const loaded = toLoad.length ? await loadBudgetSpend(o.clickhouse, o.clickhouse.database, toLoad, now(), seenMs, o.ctx) : NO_SPEND;
        return await install(loaded, toLoad.length);
      } catch (err) {
        await desk.cancelLoad();
        throw err;
      }
    };
    const done = loads.then(run, run);
    loads = done.catch(() => undefined);
    return done;
  };

  return {
    async start() {
      const t = now();
      const set = await latestBudgetSet(o.clickhouse, o.clickhouse.database, o.ctx);
      version = set?.version ?? null;
      const budgets = set?.budgets ?? [];
      // Handed over as data: the desk may sit on another thread.
      await loadThen(budgets, async (loaded, read) => {
        await desk.load({ budgets, version, loaded });
        o.logger.info({ budgets: budgets.length, version, budgets_read: read, spend_rows: loaded.spend.length, ms: Math.round(now() - t) }, 'budgets loaded');
      });
    },
    apply(budgets, keyId) {
      return loadThen(budgets, async (loaded) => {
        // Claimed across processes (migration 026): two applies never share a number.
        const v = await claimVersion(o.clickhouse, keyId, BUDGET_CLAIMS);
        await o.clickhouse.insertRows('budget_versions', [{ key: String(v), row: { version: v, budgets: JSON.stringify(budgets), key_id: keyId } }]);
        version = v;
        await desk.setBudgets({ budgets, version: v, loaded });
        return v;
      });
    },
    check: (req, keyId) => desk.check(req, keyId),
    list: () => desk.list(),
    onCallsStored: (calls) => desk.recordCalls(calls),
    flush: recorder.flush,
    async close() {
      recorder.cancel();
      await desk.stop();
      await recorder.flush();
      await desk.close();
    },
  };
}

/**
 * Writes the desk's recorded decisions to budget_decisions, batched off the checks' path: one
 * insert at a time, in order; a failed batch is logged and retried with the next one.
 */
function createDecisionRecorder(desk: DeskHandle, o: Pick<BudgetServiceOptions, 'clickhouse' | 'logger' | 'decisionsFlushMs'>): { flush(): Promise<void>; cancel(): void } {
  let pending: KeyedRow[] = [];
  let flushing: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const flush = (): Promise<void> => {
    timer = undefined;
    flushing = flushing.then(async () => {
      pending = pending.concat(await desk.takeDecisions());
      if (pending.length === 0) return;
      const rows = pending;
      pending = [];
      try {
        await o.clickhouse.insertRows('budget_decisions', rows);
      } catch (err) {
        o.logger.warn({ err: (err as Error).message, rows: rows.length }, 'budget decisions not written yet; retrying with the next batch');
        pending = rows.concat(pending);
        // Checks go on being answered while ClickHouse is away; their records wait, bounded.
        const over = pending.length - MAX_PENDING_DECISIONS;
        if (over > 0) {
          pending.splice(0, over);
          o.logger.error({ dropped: over }, 'budget decisions dropped: ClickHouse refused them for too long');
        }
        timer ??= setTimeout(() => void flush(), o.decisionsFlushMs);
      }
    });
    return flushing;
  };
  desk.onDecided(() => {
    timer ??= setTimeout(() => void flush(), o.decisionsFlushMs);
  });
  return {
    flush,
    cancel: () => {
      if (timer) clearTimeout(timer);
    },
  };
}
