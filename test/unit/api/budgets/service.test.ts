/**
 * The budget service's recording of decisions, against a door that refuses inserts for a while:
 * checks go on being answered, their records are written once ClickHouse takes them again, in
 * order, each once.
 */
import { describe, expect, it } from 'vitest';
import { createBudgetService } from '../../../../api/budgets/service.ts';
import { silentLogger } from '../../../../platform/logger.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../../queries/sql.ts';
import { budgetDoor } from '../../../helpers/budget-door.ts';

describe('budget service', () => {
  it('answers checks while ClickHouse refuses their records, and writes them all once it is back', async () => {
    const { door, decisions: inserted, state } = budgetDoor();
    const s = createBudgetService({ clickhouse: door, logger: silentLogger(), ctx: DEFAULT_QUERY_CONTEXT, reservationTimeoutMs: 1000, decisionsFlushMs: 1, now: () => Date.UTC(2026, 0, 1) });
    await s.start();
    await s.apply([{ budget_id: 'b', scope: {}, period: 'day', limit_usd: 1, mode: 'deny' }], 'open');
    state.down = true;
    const answers = await Promise.all([0.5, 0.4, 0.3].map((p, i) => s.check({ agent_id: 'a', tool_id: 't', projected_cost_usd: p, call_id: `c${i}` }, 'open')));
    expect(answers.map((a) => a.decision)).toEqual(['allow', 'allow', 'deny']);
    await s.flush();
    expect(inserted).toEqual([]);
    state.down = false;
    await s.check({ agent_id: 'a', tool_id: 't', projected_cost_usd: 0.1 }, 'open');
    await new Promise((r) => setTimeout(r, 20));
    await s.flush();
    expect(inserted.map((r) => (r.row as { projected_cost_usd: number }).projected_cost_usd)).toEqual([0.5, 0.4, 0.3, 0.1]);
    expect(new Set(inserted.map((r) => r.key)).size).toBe(4);
    expect(inserted[2]?.row).toMatchObject({ decision: 'deny', call_id: 'c2', budgets: JSON.stringify([{ budget_id: 'b', limit_usd: 1, spent_usd: 0, reserved_usd: 0.9, remaining_usd: 0.1, mode: 'deny' }]) });
    await s.close();
  });
});
