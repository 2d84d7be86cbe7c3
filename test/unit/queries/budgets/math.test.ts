import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BudgetLedger } from '../../../../queries/budgets/ledger.ts';
import { periodKey, scopeMatches, type Budget, type CallFacts, type Decision } from '../../../../queries/budgets/math.ts';
import { parseBudgetSet } from '../../../../queries/budgets/schemas.ts';

const TIMEOUT = 60_000;
const facts = fc.record({ agent_id: fc.constantFrom('a', 'b'), tool_id: fc.constantFrom('x', 'y'), task_id: fc.constantFrom('t1', 't2', '') });
// A stored cost: a tool call, or a model turn (no tool).
const storedFacts = fc.oneof(facts, facts.map((f): CallFacts => ({ ...f, tool_id: '', kind: 'model' })));
// As the budget schema allows: a scope with tool_id counts tool costs only.
const scopeArb = fc
  .record({ agent_id: fc.constantFrom('a', 'b'), tool_id: fc.constantFrom('x', 'y'), task_id: fc.constantFrom('t1', 't2'), costs: fc.constantFrom('tools' as const, 'models' as const, 'all' as const) }, { requiredKeys: [] })
  .map((s) => (s.tool_id !== undefined && s.costs !== 'tools' ? { ...s, costs: undefined } : s))
  .map((s) => Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)));
const budgetArb = (i: number) =>
  fc.record({
    budget_id: fc.constant(`b${i}`),
    scope: scopeArb,
    period: fc.constantFrom('day' as const, 'month' as const),
    limit_usd: fc.constantFrom(0.5, 1, 2, 5),
    mode: fc.constantFrom('warn' as const, 'deny' as const),
  });
const budgetsArb = fc.integer({ min: 0, max: 5 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => budgetArb(i))));
const callId = fc.constantFrom('c1', 'c2', 'c3', 'c4');
const cents = fc.integer({ min: 0, max: 150 }).map((c) => c / 100);
const eventArb = fc.oneof(
  fc.record({ kind: fc.constant('store' as const), callId: fc.option(callId), facts: storedFacts, cost: fc.option(cents), ageMs: fc.integer({ min: 0, max: 3 * 86_400_000 }) }),
  fc.record({ kind: fc.constant('check' as const), callId: fc.option(callId), facts, projected: cents }),
  fc.record({ kind: fc.constant('tick' as const), dt: fc.integer({ min: 0, max: 8 * 3_600_000 }) }),
);

/**
 * The oracle: everything recomputed from the history, periods by ISO-string slicing. A budget
 * counts the kinds its `costs` names (absent: tool calls); a check — a tool call about to run —
 * sees every budget of its agent, tool and task, and a budget counting model turns only takes no
 * share of its projected cost.
 */
class Oracle {
  stored: Array<{ facts: CallFacts; cost: number; at: number }> = [];
  reservations: Array<{ callId: string; amount: number; budgets: string[]; until: number }> = [];
  constructor(readonly budgets: Budget[]) {}
  private period(b: Budget, ms: number) {
    return new Date(ms).toISOString().slice(0, b.period === 'day' ? 10 : 7);
  }
  private matches(b: Budget, f: CallFacts) {
    return Object.entries(b.scope).every(([k, v]) => k === 'costs' || v === undefined || (f as unknown as Record<string, string>)[k] === v);
  }
  private counts(b: Budget, f: CallFacts) {
    const costs = b.scope.costs ?? 'tools';
    return costs === 'all' || costs === (f.kind === 'model' ? 'models' : 'tools');
  }
  store(id: string | null, f: CallFacts, cost: number | null, at: number) {
    this.stored.push({ facts: f, cost: cost ?? 0, at });
    if (id) this.reservations = this.reservations.filter((r) => r.callId !== id);
  }
  check(f: CallFacts, projected: number, id: string | null, now: number): { decision: Decision; figures: Array<[string, number, number]> } {
    if (id) this.reservations = this.reservations.filter((r) => r.callId !== id);
    const mine = this.budgets.filter((b) => this.matches(b, f));
    const figures = mine.map((b): [string, number, number] => [
      b.budget_id,
      this.stored.filter((s) => this.counts(b, s.facts) && this.matches(b, s.facts) && this.period(b, s.at) === this.period(b, now)).reduce((n, s) => n + s.cost, 0),
      this.reservations.filter((r) => r.until > now && r.budgets.includes(b.budget_id)).reduce((n, r) => n + r.amount, 0),
    ]);
    const share = (b: Budget) => (b.scope.costs === 'models' ? 0 : projected);
    const over = mine.filter((b, i) => (figures[i] as [string, number, number])[1] + (figures[i] as [string, number, number])[2] + share(b) > b.limit_usd + 1e-9);
    const decision: Decision = over.some((b) => b.mode === 'deny') ? 'deny' : over.length ? 'warn' : 'allow';
    const holding = mine.filter((b) => b.scope.costs !== 'models');
    if (id && decision !== 'deny' && holding.length && projected > 0) this.reservations.push({ callId: id, amount: projected, budgets: holding.map((b) => b.budget_id), until: now + TIMEOUT });
    return { decision, figures };
  }
}

describe('budget arithmetic against an oracle', () => {
  it('periods are UTC calendar days and months', () => {
    expect(periodKey('day', Date.UTC(2026, 0, 31, 23, 59, 59, 999))).toBe('2026-01-31');
    expect(periodKey('day', Date.UTC(2026, 1, 1))).toBe('2026-02-01');
    expect(periodKey('month', Date.UTC(2026, 0, 31, 23, 59, 59, 999))).toBe('2026-01');
    expect(periodKey('month', Date.UTC(2026, 1, 1))).toBe('2026-02');
    expect(scopeMatches({ task_id: 't1' }, { agent_id: 'a', tool_id: 'x' })).toBe(false);
    expect(scopeMatches({}, { agent_id: 'a', tool_id: 'x' })).toBe(true);
  });

  it('decisions and figures equal a recomputation from the history (periods crossing day and month ends)', () => {
    fc.assert(
      fc.property(budgetsArb, fc.array(eventArb, { maxLength: 60 }), (budgets, events) => {
        const ledger = new BudgetLedger(TIMEOUT);
        ledger.setBudgets(budgets);
        const oracle = new Oracle(budgets);
        let now = Date.UTC(2026, 0, 31, 20, 0, 0);
        for (const e of events) {
          if (e.kind === 'tick') now += e.dt;
          else if (e.kind === 'store') {
            ledger.recordCall(e.callId, e.facts, e.cost, now - e.ageMs);
            oracle.store(e.callId, e.facts, e.cost, now - e.ageMs);
          } else {
            const got = ledger.check({ ...e.facts, projected_cost_usd: e.projected, ...(e.callId ? { call_id: e.callId } : {}) }, now);
            const want = oracle.check(e.facts, e.projected, e.callId, now);
            expect(got.decision).toBe(want.decision);
            expect(got.budgets.map((b) => b.budget_id)).toEqual(want.figures.map((f) => f[0]));
            got.budgets.forEach((b, i) => {
              const [, spent, reserved] = want.figures[i] as [string, number, number];
              expect(b.spent_usd).toBeCloseTo(spent, 9);
              expect(b.reserved_usd).toBeCloseTo(reserved, 9);
              expect(b.remaining_usd).toBeCloseTo(b.limit_usd - spent - reserved, 9);
            });
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('a reservation is released by the stored call (its real cost counts instead) and by the timeout', () => {
    const ledger = new BudgetLedger(1000);
    ledger.setBudgets([{ budget_id: 'd', scope: { agent_id: 'a' }, period: 'day', limit_usd: 1, mode: 'deny' }]);
    const call = { agent_id: 'a', tool_id: 'x' };
    const t = Date.UTC(2026, 5, 1, 12);
    expect(ledger.check({ ...call, projected_cost_usd: 0.6, call_id: 'c1' }, t).decision).toBe('allow');
    expect(ledger.check({ ...call, projected_cost_usd: 0.6, call_id: 'c2' }, t).decision).toBe('deny');
    ledger.recordCall('c1', call, 0.1, t);
    const after = ledger.check({ ...call, projected_cost_usd: 0.6, call_id: 'c2' }, t + 1);
    expect(after).toEqual({ decision: 'allow', budgets: [{ budget_id: 'd', limit_usd: 1, spent_usd: 0.1, reserved_usd: 0, remaining_usd: 0.9, mode: 'deny' }] });
    // c2 holds 0.6 until its timeout passes
    expect(ledger.check({ ...call, projected_cost_usd: 0.5 }, t + 999).decision).toBe('deny');
    expect(ledger.check({ ...call, projected_cost_usd: 0.5 }, t + 1001).decision).toBe('allow');
  });

  it('model turns count only in budgets whose costs name them; a models-only budget over its limit denies the calls of its scope', () => {
    const ledger = new BudgetLedger(1000);
    ledger.setBudgets([
      { budget_id: 'models', scope: { agent_id: 'a', costs: 'models' }, period: 'day', limit_usd: 1, mode: 'deny' },
      { budget_id: 'all', scope: { agent_id: 'a', costs: 'all' }, period: 'day', limit_usd: 5, mode: 'warn' },
      { budget_id: 'tools', scope: { agent_id: 'a' }, period: 'day', limit_usd: 5, mode: 'warn' },
    ]);
    const t = Date.UTC(2026, 5, 1, 12);
    ledger.recordCall('turn-1', { agent_id: 'a', tool_id: '', kind: 'model' }, 0.75, t);
    ledger.recordCall('call-1', { agent_id: 'a', tool_id: 'x' }, 0.5, t);
    const spent = () => ledger.figures(t).map((f) => [f.budget_id, f.spent_usd]);
    expect(spent()).toEqual([['models', 0.75], ['all', 1.25], ['tools', 0.5]]);
    // A tool call's projected cost is no model cost: the models budget stays under its limit.
    expect(ledger.check({ agent_id: 'a', tool_id: 'x', projected_cost_usd: 2, call_id: 'c' }, t).decision).toBe('allow');
    expect(ledger.figures(t).map((f) => f.reserved_usd)).toEqual([0, 2, 2]);
    ledger.recordCall('turn-2', { agent_id: 'a', tool_id: '', kind: 'model' }, 0.5, t);
    expect(ledger.check({ agent_id: 'a', tool_id: 'x', projected_cost_usd: 0 }, t).decision).toBe('deny');
    expect(ledger.check({ agent_id: 'b', tool_id: 'x', projected_cost_usd: 0 }, t)).toEqual({ decision: 'allow', budgets: [] });
  });

  it('the budget set refuses a tool-scoped budget counting model turns', () => {
    const base = { budget_id: 'b', period: 'day', limit_usd: 1, mode: 'deny' };
    const refused = parseBudgetSet([{ ...base, scope: { tool_id: 'x', costs: 'all' } }]);
    expect(refused).toEqual({ ok: false, errors: [expect.stringMatching(/^0\.scope\.costs: a model turn is no tool's call/)] });
    expect(parseBudgetSet([{ ...base, scope: { tool_id: 'x', costs: 'tools' } }, { ...base, budget_id: 'c', scope: { agent_id: 'a', costs: 'models' } }]).ok).toBe(true);
    expect(parseBudgetSet([{ ...base, scope: { costs: 'everything' } }]).ok).toBe(false);
  });

  it('overlapping scopes: deny wins over warn, warn when only warn budgets would go over', () => {
    const ledger = new BudgetLedger(1000);
    ledger.setBudgets([
      { budget_id: 'w', scope: { tool_id: 'x' }, period: 'month', limit_usd: 1, mode: 'warn' },
      { budget_id: 'd', scope: { agent_id: 'a' }, period: 'day', limit_usd: 2, mode: 'deny' },
    ]);
    const t = Date.UTC(2026, 5, 1, 12);
    expect(ledger.check({ agent_id: 'a', tool_id: 'x', projected_cost_usd: 1.5 }, t).decision).toBe('warn');
    expect(ledger.check({ agent_id: 'a', tool_id: 'x', projected_cost_usd: 2.5 }, t).decision).toBe('deny');
    expect(ledger.check({ agent_id: 'b', tool_id: 'y', projected_cost_usd: 100 }, t)).toEqual({ decision: 'allow', budgets: [] });
  });
});
