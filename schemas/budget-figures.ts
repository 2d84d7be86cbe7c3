/**
 * A budget's figures as a check answers them: what the server computes (queries/budgets/math.ts)
 * and what the emitter hands its caller (emit/budget.ts), declared once. Types only: the emitter
 * package carries no zod.
 */

/** `warn` answers warn when over; `deny` answers deny (the caller must not run the tool). */
export type BudgetMode = 'warn' | 'deny';

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
