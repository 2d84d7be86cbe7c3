/**
 * The budgets' ledger, pure: spend and reservations per budget and UTC period, driven by an
 * explicit clock, over the arithmetic of math.ts. No I/O: the API's budget service feeds it
 * stored calls and what a spend load read, and asks it for decisions.
 */
import { countsTools, decide, figuresOf, periodKey, periodStartMs, scopeMatches, type Budget, type BudgetFigures, type CallFacts, type CheckAnswer, type CheckRequest } from './math.ts';

/** A budget's stored spend in one UTC period, as ClickHouse summed it. */
export interface PeriodSpend {
  budget_id: string;
  /** {@link periodKey} of the period. */
  period_key: string;
  spent: number;
}
/**
 * What one spend load read (queries/budgets/sql.ts loadBudgetSpend): the spend of the loaded budgets
 * per period, from the period in force at the load on, and `seen`: ids of the calls it counted that
 * were stored shortly before it, whose report may still reach the ledger after the load began.
 */
export interface LoadedSpend {
  spend: PeriodSpend[];
  seen: string[];
}
/**
 * How long before a spend load a counted call may have been stored and still be reported to the
 * ledger after the load began (the ingest writer reports a commit round after all its inserts):
 * a load returns the ids of such calls and the ledger skips their reports for as long.
 */
export const SPEND_LOAD_SEEN_MS = 60_000;

/** A load that read nothing (no budget to load). */
export const NO_SPEND: LoadedSpend = { spend: [], seen: [] };

interface Reservation {
  amount: number;
  budgetIds: string[];
  expiresAt: number;
}
/** A budget's running spend per period key (the period in force and any later one a call already fell in). */
interface Tally {
  byPeriod: Map<string, number>;
  /** Calls the load of this budget already counted: their reports must not count again. */
  seen?: ReadonlySet<string>;
}
interface BufferedCall {
  callId: string | null;
  call: CallFacts;
  cost: number;
  createdAtMs: number;
}

/** What a budget's spend depends on: two budgets with the same signature have the same spend. */
const signature = (b: Budget): string => JSON.stringify([b.period, b.scope.agent_id ?? null, b.scope.tool_id ?? null, b.scope.task_id ?? null, b.scope.costs ?? 'tools']);

/**
 * Spend and reservations per budget. Each budget keeps a running total per UTC period, starting
 * from what a load read from ClickHouse for its current period and kept current by stored calls,
 * so memory is O(budgets), not O(stored calls), and a check costs O(matching budgets). A new set
 * keeps the totals of budgets whose scope and period did not change; the others are loaded. Calls
 * stored while a load runs are buffered and added unless the load counted them (`seen`).
 */
export class BudgetLedger {
  private budgets: Budget[] = [];
  private tallies = new Map<string, Tally>();
  /** In insertion order = expiry order (one timeout for all). */
  private readonly reservations = new Map<string, Reservation>();
  private readonly reserved = new Map<string, number>();
  /** Calls stored since a load began (null: no load running). */
  private buffer: BufferedCall[] | null = null;
  /** Latest time seen: calls of a period before its period count in no period any more. */
  private floorMs = Number.NEGATIVE_INFINITY;
  private prunedDay = Number.NEGATIVE_INFINITY;
  private seenUntil = Number.NEGATIVE_INFINITY;

  constructor(private readonly reservationTimeoutMs: number) {}

  /** The budgets of `next` whose spend this ledger does not keep already (those a load must read). */
  budgetsToLoad(next: readonly Budget[]): Budget[] {
    const kept = new Set(this.budgets.map(signature));
    return next.filter((b) => !kept.has(signature(b)));
  }

  /** A load starts: calls stored from now on are also held until {@link setBudgets} or {@link cancelLoad}. */
  beginLoad(): void {
    this.buffer = [];
  }

  /** The load failed: nothing changes, the buffer is dropped. */
  cancelLoad(): void {
    this.buffer = null;
  }

  /**
   * Puts a set in force (reservations keep counting for budget ids that remain). A budget whose
   * scope and period a current budget has keeps that budget's totals; the others start from
   * `loaded` plus the calls stored since {@link beginLoad} that it did not count. Its `seen` ids
   * are skipped for `seenForMs` more (a call counted by the load but reported after it).
   */
  setBudgets(budgets: readonly Budget[], loaded: LoadedSpend = NO_SPEND, nowMs = Number.NEGATIVE_INFINITY, seenForMs = 0): void {
    const kept = new Map(this.budgets.map((b) => [signature(b), this.tallies.get(b.budget_id)] as const));
    const seen = new Set(loaded.seen);
    const read = new Map<string, Map<string, number>>();
    for (const s of loaded.spend) {
      const m = read.get(s.budget_id) ?? new Map<string, number>();
      m.set(s.period_key, (m.get(s.period_key) ?? 0) + s.spent);
      read.set(s.budget_id, m);
    }
    const buffered = this.buffer ?? [];
    this.buffer = null;
    this.floorMs = Math.max(this.floorMs, nowMs);
    const tallies = new Map<string, Tally>();
    for (const b of budgets) {
      const old = kept.get(signature(b));
      if (old) {
        tallies.set(b.budget_id, { byPeriod: new Map(old.byPeriod), ...(old.seen ? { seen: old.seen } : {}) });
        continue;
      }
      const t: Tally = { byPeriod: read.get(b.budget_id) ?? new Map(), seen };
      for (const c of buffered) if (c.callId === null || !seen.has(c.callId)) this.add(b, t, c.call, c.cost, c.createdAtMs);
      tallies.set(b.budget_id, t);
    }
    this.budgets = [...budgets];
    this.tallies = tallies;
    if (seen.size) this.seenUntil = Math.max(this.seenUntil, nowMs + seenForMs);
  }

  /** The current budget set. */
  budgetSet(): readonly Budget[] {
    return this.budgets;
  }

  /** A stored call or model turn: its cost counts (null = 0) and its reservation, if any, is released. */
  recordCall(callId: string | null, call: CallFacts, cost: number | null, createdAtMs: number): void {
    if (callId !== null) this.release(callId);
    if (!cost) return;
    const facts: CallFacts = { agent_id: call.agent_id, tool_id: call.tool_id, task_id: call.task_id ?? '', ...(call.kind === 'model' ? { kind: 'model' as const } : {}) };
    this.buffer?.push({ callId, call: facts, cost, createdAtMs });
    for (const b of this.budgets) {
      const t = this.tallies.get(b.budget_id);
      if (t && !(callId !== null && t.seen?.has(callId))) this.add(b, t, call, cost, createdAtMs);
    }
  }

  private add(b: Budget, t: Tally, call: CallFacts, cost: number, createdAtMs: number): void {
    if (!scopeMatches(b.scope, call)) return;
    const key = periodKey(b.period, createdAtMs);
    // A late call of a period already over counts in no period that can still be in force.
    if (this.floorMs > Number.NEGATIVE_INFINITY && key < periodKey(b.period, this.floorMs)) return;
    t.byPeriod.set(key, (t.byPeriod.get(key) ?? 0) + cost);
  }

  /** Spend of a budget in the period containing `nowMs`. */
  spent(b: Budget, nowMs: number): number {
    return this.tallies.get(b.budget_id)?.byPeriod.get(periodKey(b.period, nowMs)) ?? 0;
  }

  /** Drops timed-out reservations, the `seen` ids once their window passed, and totals of periods before `nowMs`'s. */
  expire(nowMs: number): void {
    for (const [id, r] of this.reservations) {
      if (r.expiresAt > nowMs) break;
      this.release(id);
    }
    this.floorMs = Math.max(this.floorMs, nowMs);
    if (nowMs >= this.seenUntil && this.seenUntil > Number.NEGATIVE_INFINITY) {
      this.seenUntil = Number.NEGATIVE_INFINITY;
      for (const t of this.tallies.values()) delete t.seen;
    }
    const day = periodStartMs('day', nowMs);
    if (day <= this.prunedDay) return;
    // Once per UTC day, not per check: a check must not cost O(budgets × periods).
    this.prunedDay = day;
    for (const b of this.budgets) {
      const floor = periodKey(b.period, nowMs);
      const t = this.tallies.get(b.budget_id);
      for (const k of t?.byPeriod.keys() ?? []) if (k < floor) t?.byPeriod.delete(k);
    }
  }

  private release(callId: string): void {
    const r = this.reservations.get(callId);
    if (!r) return;
    this.reservations.delete(callId);
    for (const id of r.budgetIds) this.reserved.set(id, (this.reserved.get(id) ?? 0) - r.amount);
  }

  /** Figures of every budget for the period of `nowMs`. */
  figures(nowMs: number, call?: CallFacts): Array<BudgetFigures & { budget: Budget }> {
    this.expire(nowMs);
    return this.budgets
      .filter((b) => !call || scopeMatches(b.scope, call, true))
      .map((b) => ({ ...figuresOf(b, this.spent(b, nowMs), this.reserved.get(b.budget_id) ?? 0), budget: b }));
  }

  /**
   * Decides a check and, with a call_id and an allow/warn, reserves its projected cost on the
   * matching budgets until the call is stored or the timeout passes. Synchronous: a check and
   * its reservation happen with no other check in between (what keeps parallel checks exact).
   * A second check of the same call_id replaces its reservation.
   */
  check(req: CheckRequest, nowMs: number): CheckAnswer {
    if (req.call_id !== undefined) this.release(req.call_id);
    const seen = this.figures(nowMs, req);
    const budgets = seen.map(({ budget: _b, ...f }) => f);
    const holding = seen.filter((f) => countsTools(f.budget.scope));
    const decision = decide(budgets, seen.map((f) => (countsTools(f.budget.scope) ? req.projected_cost_usd : 0)));
    if (req.call_id !== undefined && decision !== 'deny' && holding.length > 0 && req.projected_cost_usd > 0) {
      const r = { amount: req.projected_cost_usd, budgetIds: holding.map((f) => f.budget_id), expiresAt: nowMs + this.reservationTimeoutMs };
      this.reservations.set(req.call_id, r);
      for (const id of r.budgetIds) this.reserved.set(id, (this.reserved.get(id) ?? 0) + r.amount);
    }
    return { decision, budgets };
  }
}
