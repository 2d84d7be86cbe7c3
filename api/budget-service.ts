/**
 * The budget service of an API process (issue 14): a {@link BudgetLedger} in memory, rebuilt from
 * ClickHouse at start (the newest budget set and one spend aggregate), kept current by the ingest
 * writer of the same process ({@link BudgetService.onCallsStored}), answering checks without a
 * query. Every decision is recorded in `budget_decisions`, batched off the check's path.
 */
import { randomUUID } from 'node:crypto';
import type { StoredCall } from '../ingest/ports.ts';
import type { ClickHouseDoor, KeyedRow } from '../platform/clickhouse/door.ts';
import type { Logger } from '../platform/logger.ts';
import { BudgetLedger, type Budget } from '../queries/budget-math.ts';
import type { BudgetCheckAnswer, BudgetCheckRequest, BudgetList } from '../queries/budget-schemas.ts';
import { budgetListOf, latestBudgetSet, loadSpend } from '../queries/budgets.ts';
import { chTime, type QueryContext } from '../queries/sql.ts';

/** Options of {@link createBudgetService}. */
export interface BudgetServiceOptions {
  clickhouse: ClickHouseDoor;
  logger: Logger;
  ctx: QueryContext;
  reservationTimeoutMs: number;
  decisionsFlushMs: number;
  /** The clock (tests move it). */
  now?: () => number;
}

/** Budgets of one process. */
export interface BudgetService {
  /** Loads the set in force and rebuilds spend from ClickHouse; call before the writer writes. */
  start(): Promise<void>;
  /** Stores a new version of the whole set and puts it in force; resolves with its version. */
  apply(budgets: Budget[], keyId: string): Promise<number>;
  /** Decides (and reserves, with a call_id) at once; the decision is recorded in the background. */
  check(req: BudgetCheckRequest, keyId: string): BudgetCheckAnswer;
  /** Every budget with its current-period figures. */
  list(): BudgetList;
  /** The ingest writer's port (ports.ts CallsStoredListener). */
  onCallsStored(calls: StoredCall[]): void;
  /** Writes the decisions recorded so far. */
  flush(): Promise<void>;
  /** Flushes and stops the timer. */
  close(): Promise<void>;
}

/** Decisions held while ClickHouse refuses them; beyond this the oldest are dropped (and logged). */
const MAX_PENDING_DECISIONS = 100_000;

/** A budget service over a database (nothing loaded until start()). */
export function createBudgetService(o: BudgetServiceOptions): BudgetService {
  const now = o.now ?? Date.now;
  const ledger = new BudgetLedger(o.reservationTimeoutMs);
  let version: number | null = null;
  let pending: KeyedRow[] = [];
  let flushing: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  const flush = (): Promise<void> => {
    timer = undefined;
    if (pending.length === 0) return flushing;
    const rows = pending;
    pending = [];
    // One insert at a time, in order; a failed batch is logged and retried with the next one.
    flushing = flushing.then(async () => {
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

  return {
    async start() {
      const t = now();
      const set = await latestBudgetSet(o.clickhouse, o.clickhouse.database, o.ctx);
      if (set) {
        version = set.version;
        ledger.setBudgets(set.budgets);
      }
      const cells = await loadSpend(o.clickhouse, o.clickhouse.database, ledger, t, o.ctx);
      o.logger.info({ budgets: set?.budgets.length ?? 0, version, spend_cells: cells, ms: Math.round(now() - t) }, 'budgets loaded');
    },
    async apply(budgets, keyId) {
      const v = Math.max(now(), (version ?? 0) + 1);
      await o.clickhouse.insertRows('budget_versions', [{ key: String(v), row: { version: v, budgets: JSON.stringify(budgets), key_id: keyId } }]);
      version = v;
      ledger.setBudgets(budgets);
      return v;
    },
    check(req, keyId) {
      const t = now();
      const answer = ledger.check({ ...req, ...(req.call_id === undefined ? {} : { call_id: req.call_id }) }, t);
      const decision_id = randomUUID();
      pending.push({
        key: decision_id,
        row: {
          decision_id,
          decided_at: chTime(t),
          agent_id: req.agent_id,
          tool_id: req.tool_id,
          task_id: req.task_id ?? '',
          call_id: req.call_id ?? '',
          projected_cost_usd: req.projected_cost_usd,
          decision: answer.decision,
          budgets: JSON.stringify(answer.budgets),
          budget_version: version ?? 0,
          key_id: keyId,
        },
      });
      timer ??= setTimeout(() => void flush(), o.decisionsFlushMs);
      return { ...answer, decision_id };
    },
    list: () => budgetListOf(ledger, version, now()),
    onCallsStored(calls) {
      for (const c of calls) ledger.recordCall(c.call_id, c, c.cost_usd, c.created_at_ms);
    },
    flush,
    async close() {
      if (timer) clearTimeout(timer);
      await flush();
    },
  };
}
