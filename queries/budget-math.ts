/**
 * Budget arithmetic (issue 14), pure: which budgets a call falls under, UTC calendar periods, the
 * allow/warn/deny decision, and a ledger of spend and reservations driven by an explicit clock.
 * No I/O: the API's budget service feeds it stored calls and asks it for decisions; the unit
 * tests compare it with a naive oracle that recomputes everything from the event history.
 */

/** UTC calendar period a budget's limit applies to. */
export type BudgetPeriod = 'day' | 'month';
/** `warn` answers warn when over; `deny` answers deny (the caller must not run the tool). */
export type BudgetMode = 'warn' | 'deny';
/** What a budget covers: an absent field matches any value. */
export interface BudgetScope {
  agent_id?: string;
  tool_id?: string;
  task_id?: string;
}
/** One budget of the set. */
export interface Budget {
  budget_id: string;
  scope: BudgetScope;
  period: BudgetPeriod;
  limit_usd: number;
  mode: BudgetMode;
}
/** The facts of a call a scope is matched against (task_id null or '' = no task). */
export interface CallFacts {
  agent_id: string;
  tool_id: string;
  task_id?: string | null;
}
/** A budget's figures as a check saw them. */
export interface BudgetFigures {
  budget_id: string;
  limit_usd: number;
  spent_usd: number;
  reserved_usd: number;
  /** limit − spent − reserved (negative when already over). */
  remaining_usd: number;
  mode: BudgetMode;
}
/** The answer of a check. */
export type Decision = 'allow' | 'warn' | 'deny';
/** A check request. */
export interface CheckRequest extends CallFacts {
  projected_cost_usd: number;
  call_id?: string;
}
/** What a check answers. */
export interface CheckAnswer {
  decision: Decision;
  budgets: BudgetFigures[];
}

/** Whether a call falls under a scope (absent fields match anything; a task scope needs that task). */
export function scopeMatches(scope: BudgetScope, call: CallFacts): boolean {
  if (scope.agent_id !== undefined && scope.agent_id !== call.agent_id) return false;
  if (scope.tool_id !== undefined && scope.tool_id !== call.tool_id) return false;
  if (scope.task_id !== undefined && scope.task_id !== (call.task_id ?? '')) return false;
  return true;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** The UTC period containing `ms`: `YYYY-MM-DD` for a day, `YYYY-MM` for a month. */
export function periodKey(period: BudgetPeriod, ms: number): string {
  const d = new Date(ms);
  const month = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}`;
  return period === 'month' ? month : `${month}-${pad(d.getUTCDate())}`;
}

/** Start (inclusive, ms) of the UTC period containing `ms`. */
export function periodStartMs(period: BudgetPeriod, ms: number): number {
  const d = new Date(ms);
  return period === 'month' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

/** Dollars to nano-dollars and back: sums of floats are compared without their last-bit noise. */
export const roundUsd = (x: number): number => Math.round(x * 1e9) / 1e9;

/** The figures of a budget and whether `projected` more would take it over its limit. */
export function figuresOf(b: Budget, spent: number, reserved: number): BudgetFigures {
  return { budget_id: b.budget_id, limit_usd: b.limit_usd, spent_usd: roundUsd(spent), reserved_usd: roundUsd(reserved), remaining_usd: roundUsd(b.limit_usd - spent - reserved), mode: b.mode };
}

/** deny when a deny budget would go over (spent + reserved + projected > limit), warn when only warn budgets would. */
export function decide(figures: readonly BudgetFigures[], projected: number): Decision {
  let decision: Decision = 'allow';
  for (const f of figures) {
    if (roundUsd(f.spent_usd + f.reserved_usd + projected) <= f.limit_usd) continue;
    if (f.mode === 'deny') return 'deny';
    decision = 'warn';
  }
  return decision;
}

/** Stored spend of one (agent, tool, task, UTC day). */
export interface SpendCell extends CallFacts {
  /** Start of the UTC day (ms). */
  dayMs: number;
  cost: number;
}
interface Reservation {
  amount: number;
  budgetIds: string[];
  expiresAt: number;
}

/**
 * Spend and reservations per budget. Stored calls are kept per (agent, tool, task, UTC day) so a
 * new budget set or a new period is recomputed from memory; each budget's current-period total is
 * cached and kept current incrementally, so a check costs O(matching budgets), not O(calls).
 */
export class BudgetLedger {
  private budgets: Budget[] = [];
  private readonly cells = new Map<string, SpendCell>();
  private readonly totals = new Map<string, { period: string; spent: number }>();
  /** In insertion order = expiry order (one timeout for all). */
  private readonly reservations = new Map<string, Reservation>();
  private readonly reserved = new Map<string, number>();
  private prunedBefore = Number.NEGATIVE_INFINITY;

  constructor(private readonly reservationTimeoutMs: number) {}

  /** Replaces the budget set (reservations keep counting for budget ids that remain). */
  setBudgets(budgets: readonly Budget[]): void {
    this.budgets = [...budgets];
    this.totals.clear();
  }

  /** The current budget set. */
  budgetSet(): readonly Budget[] {
    return this.budgets;
  }

  /** A stored call: its cost counts (null = 0) and its reservation, if any, is released. */
  recordCall(callId: string | null, call: CallFacts, cost: number | null, createdAtMs: number): void {
    if (callId !== null) this.release(callId);
    const dayMs = periodStartMs('day', createdAtMs);
    const key = `${call.agent_id}\u0000${call.tool_id}\u0000${call.task_id ?? ''}\u0000${dayMs}`;
    const c = this.cells.get(key);
    if (c) c.cost += cost ?? 0;
    else this.cells.set(key, { agent_id: call.agent_id, tool_id: call.tool_id, task_id: call.task_id ?? '', dayMs, cost: cost ?? 0 });
    if (!cost) return;
    for (const b of this.budgets) {
      const t = this.totals.get(b.budget_id);
      if (t && t.period === periodKey(b.period, createdAtMs) && scopeMatches(b.scope, call)) t.spent += cost;
    }
  }

  /** Stored spend read back at start (no reservation is released: no call is named). */
  addCells(cells: readonly SpendCell[]): void {
    for (const c of cells) this.recordCall(null, c, c.cost, c.dayMs);
  }

  /** Spend of a budget in the period containing `nowMs`. */
  spent(b: Budget, nowMs: number): number {
    const period = periodKey(b.period, nowMs);
    const t = this.totals.get(b.budget_id);
    if (t && t.period === period) return t.spent;
    let spent = 0;
    for (const c of this.cells.values()) if (periodKey(b.period, c.dayMs) === period && scopeMatches(b.scope, c)) spent += c.cost;
    this.totals.set(b.budget_id, { period, spent });
    return spent;
  }

  /** Drops reservations whose timeout has passed and days before `nowMs`'s month (no period of now needs them). */
  expire(nowMs: number): void {
    for (const [id, r] of this.reservations) {
      if (r.expiresAt > nowMs) break;
      this.release(id);
    }
    const monthStart = periodStartMs('month', nowMs);
    if (monthStart <= this.prunedBefore) return;
    // Once per month, not per check: a check must not cost O(cells).
    this.prunedBefore = monthStart;
    for (const [k, c] of this.cells) if (c.dayMs < monthStart) this.cells.delete(k);
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
      .filter((b) => !call || scopeMatches(b.scope, call))
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
    const decision = decide(budgets, req.projected_cost_usd);
    if (req.call_id !== undefined && decision !== 'deny' && seen.length > 0 && req.projected_cost_usd > 0) {
      const r = { amount: req.projected_cost_usd, budgetIds: seen.map((f) => f.budget_id), expiresAt: nowMs + this.reservationTimeoutMs };
      this.reservations.set(req.call_id, r);
      for (const id of r.budgetIds) this.reserved.set(id, (this.reserved.get(id) ?? 0) + r.amount);
    }
    return { decision, budgets };
  }
}
