/**
 * Zod contracts of the budget API: the budget set of PUT /v1/budgets, the check of
 * POST /v1/budget/check and the answers of GET /v1/budgets and GET /v1/budget/decisions. Types
 * come from them; the OpenAPI document publishes them; the HTTP client checks answers with them.
 */
import { z } from 'zod';

const id = z.string().min(1).max(256);
const usd = z.number().finite().min(0);

/**
 * What a budget covers; an absent field matches any value. `costs` says which stored costs count:
 * the tool calls' (absent: what budgets always counted), the model turns', or both. A turn is no
 * tool's call, so a budget scoped to a tool counts tool calls only.
 */
export const budgetScopeSchema = z
  .strictObject({
    agent_id: id.optional(),
    tool_id: id.optional(),
    task_id: id.optional(),
    costs: z.enum(['tools', 'models', 'all']).optional().describe("costs counted: 'tools' (tool calls; the default), 'models' (model turns), 'all'"),
  })
  .superRefine((s, ctx) => {
    if (s.tool_id !== undefined && s.costs !== undefined && s.costs !== 'tools')
      ctx.addIssue({ code: 'custom', path: ['costs'], message: `a model turn is no tool's call: a budget scoped to tool_id counts tool costs only (drop tool_id or use costs 'tools')` });
  });

/** One budget. */
export const budgetSchema = z.strictObject({
  budget_id: id,
  scope: budgetScopeSchema.default({}),
  period: z.enum(['day', 'month']).describe('UTC calendar day or month'),
  limit_usd: usd,
  mode: z.enum(['warn', 'deny']),
});

/** The whole set (each PUT is a new version of it). */
export const budgetSetSchema = z.array(budgetSchema).max(10_000);

/**
 * A budget set, or every offence in it (each budget's field errors and every repeated
 * budget_id together: a set is refused whole, so the author fixes everything at once).
 */
export function parseBudgetSet(value: unknown): { ok: true; budgets: BudgetSet } | { ok: false; errors: string[] } {
  const parsed = budgetSetSchema.safeParse(value);
  const errors = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`);
  if (Array.isArray(value)) {
    const first = new Map<unknown, number>();
    value.forEach((b: unknown, i) => {
      const id = (b as { budget_id?: unknown } | null)?.budget_id;
      if (typeof id !== 'string') return;
      const at = first.get(id);
      if (at === undefined) first.set(id, i);
      else errors.push(`${i}.budget_id: "${id}" repeats budget ${at}`);
    });
  }
  return errors.length || !parsed.success ? { ok: false, errors } : { ok: true, budgets: parsed.data };
}
export type BudgetSet = z.infer<typeof budgetSetSchema>;

/** POST /v1/budget/check. */
export const budgetCheckRequestSchema = z.strictObject({
  agent_id: id,
  tool_id: id,
  task_id: id.nullable().optional(),
  projected_cost_usd: usd,
  call_id: id.optional().describe('with it, an allow/warn reserves the projected cost until the call is stored or the reservation times out'),
});
export type BudgetCheckRequest = z.infer<typeof budgetCheckRequestSchema>;

const figures = {
  budget_id: z.string(),
  limit_usd: z.number(),
  spent_usd: z.number().describe('SUM(cost_usd) of the stored calls (and model turns, when the budget counts them) in scope and in the current UTC period'),
  reserved_usd: z.number().describe('projected costs of allowed checks whose calls are not stored yet'),
  remaining_usd: z.number().describe('limit − spent − reserved (negative when over)'),
  mode: z.enum(['warn', 'deny']),
};
/** A budget's figures as a check saw them. */
export const budgetFiguresSchema = z.strictObject(figures);

/** The answer of POST /v1/budget/check. */
export const budgetCheckAnswerSchema = z.strictObject({
  decision: z.enum(['allow', 'warn', 'deny']),
  budgets: z.array(budgetFiguresSchema).describe('every budget whose scope matches'),
  decision_id: z.string(),
});
export type BudgetCheckAnswer = z.infer<typeof budgetCheckAnswerSchema>;

/** GET /v1/budgets. */
export const budgetListSchema = z.strictObject({
  version: z.number().int().nullable().describe('the version of the set in force (null: none applied yet)'),
  budgets: z.array(z.strictObject({ ...figures, scope: budgetScopeSchema, period: z.enum(['day', 'month']), period_key: z.string() })),
});
export type BudgetList = z.infer<typeof budgetListSchema>;

/** One recorded decision. */
export const budgetDecisionSchema = z.strictObject({
  decision_id: z.string(),
  decided_at: z.string(),
  request: z.strictObject({ agent_id: z.string(), tool_id: z.string(), task_id: z.string().nullable(), call_id: z.string().nullable(), projected_cost_usd: z.number() }),
  decision: z.enum(['allow', 'warn', 'deny']),
  budgets: z.array(budgetFiguresSchema),
  budget_version: z.number().int(),
  key_id: z.string(),
});
/** GET /v1/budget/decisions. */
export const budgetDecisionsSchema = z.strictObject({ decisions: z.array(budgetDecisionSchema), next_cursor: z.string().nullable() });
export type BudgetDecisions = z.infer<typeof budgetDecisionsSchema>;
