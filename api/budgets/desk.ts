/**
 * The budget desk: the one ledger of spend and reservations of a process, the budget
 * set in force, and the decisions recorded but not yet written. No I/O, so it runs where the
 * checks are answered: in the API's thread (tests, {@link createLocalDesk}) or on a thread of its
 * own (`serve`, api/budgets/thread.ts), whose small heap keeps a check's latency clear of the
 * main thread's garbage collections and ClickHouse work.
 */
import { randomUUID } from 'node:crypto';
import type { StoredCall } from '../../ingest/ports.ts';
import type { KeyedRow } from '../../platform/clickhouse/door.ts';
import { BudgetLedger, SPEND_LOAD_SEEN_MS, type LoadedSpend } from '../../queries/budgets/ledger.ts';
import type { Budget } from '../../queries/budgets/math.ts';
import type { BudgetCheckAnswer, BudgetCheckRequest, BudgetList } from '../../queries/budgets/schemas.ts';
import { budgetListOf } from '../../queries/budgets/sql.ts';
import { chTime } from '../../queries/sql.ts';

/** A set put in force: its budgets, its version and the spend read for the budgets it loaded. */
export interface DeskState {
  budgets: Budget[];
  version: number | null;
  loaded: LoadedSpend;
}

/** A ledger and the decisions it has answered, in one place. */
export class BudgetDesk {
  private readonly ledger: BudgetLedger;
  private version: number | null = null;
  private decisions: KeyedRow[] = [];

  /**
   * `firstDecision` is told when a decision waits to be written and none did before it;
   * `seenForMs` is how long the ids a load counted are skipped (see BudgetLedger.setBudgets).
   */
  constructor(
    reservationTimeoutMs: number,
    private readonly firstDecision: () => void = () => {},
    private readonly seenForMs = SPEND_LOAD_SEEN_MS,
  ) {
    this.ledger = new BudgetLedger(reservationTimeoutMs);
  }

  /** The budgets of `budgets` whose spend must be read; calls stored from now on are held until {@link setBudgets} or {@link cancelLoad}. */
  beginLoad(budgets: readonly Budget[]): Budget[] {
    this.ledger.beginLoad();
    return this.ledger.budgetsToLoad(budgets);
  }

  /** The load failed: the set in force stays. */
  cancelLoad(): void {
    this.ledger.cancelLoad();
  }

  /** Puts a set in force (stored by the caller before), with the spend its load read. */
  setBudgets(s: DeskState, nowMs: number): void {
    this.version = s.version;
    this.ledger.setBudgets(s.budgets, s.loaded, nowMs, this.seenForMs);
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
  /** Starts a load of `budgets` (see {@link BudgetDesk.beginLoad}); answers the budgets to read. */
  beginLoad(budgets: Budget[]): Promise<Budget[]>;
  /** Ends a load that failed. */
  cancelLoad(): Promise<void>;
  /** Puts the first set in force at start (the thread then opens its check listener, if any). */
  load(s: DeskState): Promise<void>;
  /** Puts a new set in force. */
  setBudgets(s: DeskState): Promise<void>;
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
export function createLocalDesk(reservationTimeoutMs: number, now: () => number = Date.now, seenForMs = SPEND_LOAD_SEEN_MS): DeskHandle {
  let decided = (): void => {};
  const desk = new BudgetDesk(reservationTimeoutMs, () => decided(), seenForMs);
  return {
    beginLoad: async (b) => desk.beginLoad(b),
    cancelLoad: async () => desk.cancelLoad(),
    load: async (s) => desk.setBudgets(s, now()),
    setBudgets: async (s) => desk.setBudgets(s, now()),
    check: async (req, keyId) => desk.check(req, keyId, now()),
    list: async () => desk.list(now()),
    recordCalls: (calls) => desk.recordCalls(calls),
    takeDecisions: async () => desk.takeDecisions(),
    onDecided: (l) => void (decided = l),
    stop: async () => {},
    close: async () => {},
  };
}
