/**
 * Budget arithmetic, pure: which budgets a call falls under, UTC calendar periods and the
 * allow/warn/deny decision; the ledger of spend and reservations built on it is ledger.ts. No
 * I/O: the unit tests compare both with a naive oracle that recomputes everything from the event
 * history.
 */
import type { BudgetFigures, BudgetMode } from '../../schemas/budget-figures.ts';

export type { BudgetFigures, BudgetMode } from '../../schemas/budget-figures.ts';

/** UTC calendar period a budget's limit applies to. */
export type BudgetPeriod = 'day' | 'month';
/** Which stored costs a budget counts: tool calls (the default), model turns, or both. */
export type BudgetCosts = 'tools' | 'models' | 'all';
/** What a budget covers: an absent field matches any value; `costs` absent = `tools`. */
export interface BudgetScope {
  agent_id?: string;
  tool_id?: string;
  task_id?: string;
  costs?: BudgetCosts;
}
/** One budget of the set. */
export interface Budget {
  budget_id: string;
  scope: BudgetScope;
  period: BudgetPeriod;
  limit_usd: number;
  mode: BudgetMode;
}
/**
 * The facts of a stored cost a scope is matched against (task_id null or '' = no task): a tool
 * call, or with `kind: 'model'` a model turn (its tool_id is '': a turn is no tool's call).
 */
export interface CallFacts {
  agent_id: string;
  tool_id: string;
  task_id?: string | null;
  kind?: 'tool' | 'model';
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

/** Whether a budget counts costs of tool calls (`tools`, the default, and `all`). */
export const countsTools = (scope: BudgetScope): boolean => scope.costs !== 'models';
/** Whether a budget counts costs of model turns (`models`, `all`). */
export const countsModels = (scope: BudgetScope): boolean => scope.costs === 'models' || scope.costs === 'all';

/**
 * Whether a stored cost falls under a scope: its kind is one the budget counts, and absent fields
 * match anything (a task scope needs that task). A check (a tool call about to run) is matched with
 * `kind` ignored: a budget counting model turns answers for the calls of its agent and task too.
 */
export function scopeMatches(scope: BudgetScope, call: CallFacts, ignoreKind = false): boolean {
  if (!ignoreKind && !(call.kind === 'model' ? countsModels(scope) : countsTools(scope))) return false;
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

/**
 * deny when a deny budget would go over (spent + reserved + its share of the projected cost > limit),
 * warn when only warn budgets would. `projected[i]` is budget i's share: a budget counting model
 * turns only holds none of a tool call's cost, so it is over only once its turns are.
 */
export function decide(figures: readonly BudgetFigures[], projected: readonly number[]): Decision {
  let decision: Decision = 'allow';
  for (const [i, f] of figures.entries()) {
    if (roundUsd(f.spent_usd + f.reserved_usd + (projected[i] ?? 0)) <= f.limit_usd) continue;
    if (f.mode === 'deny') return 'deny';
    decision = 'warn';
  }
  return decision;
}
