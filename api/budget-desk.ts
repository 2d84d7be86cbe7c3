/**
 * The budget desk (issue 14): the one ledger of spend and reservations of a process, the budget
 * set in force, and the decisions recorded but not yet written. No I/O, so it runs where the
 * checks are answered: in the API's thread (tests, {@link createLocalDesk}) or on a thread of its
 * own (`serve`, api/budget-thread.ts), whose small heap keeps a check's latency clear of the
 * main thread's garbage collections and ClickHouse work.
 */
import { randomUUID } from 'node:crypto';
import type { StoredCall } from '../ingest/ports.ts';
import type { KeyedRow } from '../platform/clickhouse/door.ts';
import { BudgetLedger, type Budget, type SpendCell } from '../queries/budget-math.ts';
import type { BudgetCheckAnswer, BudgetCheckRequest, BudgetList } from '../queries/budget-schemas.ts';
import { budgetListOf } from '../queries/budgets.ts';
import { chTime } from '../queries/sql.ts';

/** What a desk is loaded with at start: the set in force and the stored spend of the month. */
export interface DeskState {
  budgets: Budget[];
  version: number | null;
  cells: SpendCell[];
}

/** A ledger and the decisions it has answered, in one place. */
export class BudgetDesk {
  private readonly ledger: BudgetLedger;
  private version: number | null = null;
  private decisions: KeyedRow[] = [];

  /** `firstDecision` is told when a decision waits to be written and none did before it. */
  constructor(
    reservationTimeoutMs: number,
    private readonly firstDecision: () => void = () => {},
  ) {
    this.ledger = new BudgetLedger(reservationTimeoutMs);
  }

  /** Puts the loaded state in force (once, before the first check). */
  load(s: DeskState): void {
    this.setBudgets(s.budgets, s.version);
    this.ledger.addCells(s.cells);
  }

  /** A new version of the set (stored by the caller before it is put in force). */
  setBudgets(budgets: Budget[], version: number | null): void {
    this.version = version;
    this.ledger.setBudgets(budgets);
  }

  /** Decides (and reserves, with a call_id) at once, and records the decision to be written. */
  check(req: BudgetCheckRequest, keyId: string, nowMs: number): BudgetCheckAnswer {
    const answer = this.ledger.check({ ...req, ...(req.call_id === undefined ? {} : { call_id: req.call_id }) }, nowMs);
    const decision_id = randomUUID();
    this.decisions.push({
      key: decision_id,
      row: {
        decision_id,
        decided_at: chTime(nowMs),
        agent_id: req.agent_id,
        tool_id: req.tool_id,
        task_id: req.task_id ?? '',
        call_id: req.call_id ?? '',
        projected_cost_usd: req.projected_cost_usd,
        decision: answer.decision,
        budgets: JSON.stringify(answer.budgets),
        budget_version: this.version ?? 0,
        key_id: keyId,
      },
    });
    if (this.decisions.length === 1) this.firstDecision();
    return { ...answer, decision_id };
  }

  /** Every budget with its current-period figures. */
  list(nowMs: number): BudgetList {
    return budgetListOf(this.ledger, this.version, nowMs);
  }

  /** Stored calls: their cost counts and their reservations are released. */
  recordCalls(calls: readonly StoredCall[]): void {
    for (const c of calls) this.ledger.recordCall(c.call_id, c, c.cost_usd, c.created_at_ms);
  }

  /** The decisions recorded since the last call, oldest first. */
  takeDecisions(): KeyedRow[] {
    const rows = this.decisions;
    this.decisions = [];
    return rows;
  }
}

/**
 * Where a budget service's desk lives. Every method may cross a thread, so answers are promises;
 * a check is still decided in one synchronous step on the desk's side (what keeps parallel checks
 * exact). `onDecided` is told when decisions start waiting to be written.
 */
export interface DeskHandle {
  load(s: DeskState): Promise<void>;
  setBudgets(budgets: Budget[], version: number | null): Promise<void>;
  check(req: BudgetCheckRequest, keyId: string): Promise<BudgetCheckAnswer>;
  list(): Promise<BudgetList>;
  recordCalls(calls: StoredCall[]): void;
  takeDecisions(): Promise<KeyedRow[]>;
  onDecided(listener: () => void): void;
  /** Stops taking checks from doors of its own (decisions already answered can still be taken). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/** A desk in the caller's thread, on the given clock. */
export function createLocalDesk(reservationTimeoutMs: number, now: () => number = Date.now): DeskHandle {
  let decided = (): void => {};
  const desk = new BudgetDesk(reservationTimeoutMs, () => decided());
  return {
    load: async (s) => desk.load(s),
    setBudgets: async (b, v) => desk.setBudgets(b, v),
    check: async (req, keyId) => desk.check(req, keyId, now()),
    list: async () => desk.list(now()),
    recordCalls: (calls) => desk.recordCalls(calls),
    takeDecisions: async () => desk.takeDecisions(),
    onDecided: (l) => void (decided = l),
    stop: async () => {},
    close: async () => {},
  };
}
