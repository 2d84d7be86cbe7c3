/**
 * Budget spend at start and on a new set, on a real ClickHouse: without budgets no
 * statement reads tool_invocations; with budgets each one's spend equals a sum over the generated
 * calls computed here in JS (agent, tool, task and combined scopes, day and month periods, calls of
 * the previous day and month left out); and calls stored and reported while a new set is loaded
 * — before, during and after its statement, and reported late — are each counted once.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createBudgetService, type BudgetService } from '../../../api/budgets/service.ts';
import type { StoredCall } from '../../../ingest/ports.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import type { ClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { silentLogger } from '../../../platform/logger.ts';
import type { Budget } from '../../../queries/budgets/math.ts';
import { budgetListFromStore } from '../../../queries/budgets/sql.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { freshDatabase } from '../../helpers/clickhouse.ts';
import { insertCalls, rawCall } from '../../helpers/raw-calls.ts';
import { rng } from '../../helpers/rng.ts';

// The first of a month: "yesterday" is in the previous month, so both periods have an edge here.
const NOW = Date.UTC(2026, 10, 1, 9, 30);
const HOUR = 3_600_000;

type Call = StoredCall & { cost_usd: number | null };

/** The door with every statement that names tool_invocations counted (the real door runs it). */
function countingDoor(door: ClickHouseDoor): { door: ClickHouseDoor; reads: string[] } {
  const reads: string[] = [];
  const note = (sql: string) => {
    if (sql.includes('tool_invocations')) reads.push(sql);
  };
  const spy: ClickHouseDoor = {
    ...door,
    read: (spec, params, ctx) => (note(spec.sql), door.read(spec, params, ctx)),
    select: (q, p, s) => (note(q), door.select(q, p, s)),
    selectFields: (q, p, s) => (note(q), door.selectFields(q, p, s)),
  };
  return { door: spy, reads };
}

/** Stores calls the way the writer does (ingested_at from ClickHouse's clock); the caller reports them. */
function store(ch: ClickHouseClient, db: string, calls: readonly Call[]): Promise<void> {
  const raw = calls.map((c) => rawCall({ call_id: c.call_id, task_id: c.task_id ?? '', tool_id: c.tool_id, agent_id: c.agent_id, t: c.created_at_ms, duration_ms: 1, cost_usd: c.cost_usd }));
  return insertCalls(ch, db, raw);
}

/** Calls around NOW: today, yesterday (previous month), earlier this month's-previous days, a few null costs. */
function generate(seed: number, n: number, ages: readonly number[] = [0, 1, 2, 5, 20, 30, 40].map((d) => d * 24 * HOUR)): Call[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  return Array.from({ length: n }, () => ({
    call_id: randomUUID(),
    agent_id: pick(['A', 'B', 'C']),
    tool_id: pick(['search', 'fetch']),
    task_id: pick(['t1', 't2', '']),
    cost_usd: r() < 0.1 ? null : Math.round(r() * 500) / 100,
    // Spread over the day and before it; some after NOW (later today, stored ahead of their time).
    created_at_ms: NOW - pick(ages) - Math.floor(r() * 9 * HOUR) + 2 * HOUR,
  }));
}

const BUDGETS: Budget[] = [
  { budget_id: 'all-day', scope: {}, period: 'day', limit_usd: 100, mode: 'warn' },
  { budget_id: 'all-month', scope: {}, period: 'month', limit_usd: 1000, mode: 'warn' },
  { budget_id: 'agent-A-day', scope: { agent_id: 'A' }, period: 'day', limit_usd: 10, mode: 'deny' },
  { budget_id: 'agent-B-month', scope: { agent_id: 'B' }, period: 'month', limit_usd: 10, mode: 'deny' },
  { budget_id: 'tool-fetch-month', scope: { tool_id: 'fetch' }, period: 'month', limit_usd: 10, mode: 'warn' },
  { budget_id: 'task-t1-day', scope: { task_id: 't1' }, period: 'day', limit_usd: 10, mode: 'deny' },
  { budget_id: 'A-search-t2-month', scope: { agent_id: 'A', tool_id: 'search', task_id: 't2' }, period: 'month', limit_usd: 10, mode: 'deny' },
  { budget_id: 'no-such-agent', scope: { agent_id: 'Z' }, period: 'month', limit_usd: 10, mode: 'deny' },
];

/** The oracle: the budget's period by ISO-string slicing, its scope field by field. */
function oracle(b: Budget, calls: readonly Call[], nowMs: number): number {
  const period = (ms: number) => new Date(ms).toISOString().slice(0, b.period === 'day' ? 10 : 7);
  const inScope = (c: Call) =>
    (b.scope.agent_id === undefined || b.scope.agent_id === c.agent_id) && (b.scope.tool_id === undefined || b.scope.tool_id === c.tool_id) && (b.scope.task_id === undefined || b.scope.task_id === c.task_id);
  return calls.filter((c) => inScope(c) && period(c.created_at_ms) === period(nowMs)).reduce((s, c) => s + (c.cost_usd ?? 0), 0);
}

async function expectSpend(service: BudgetService, budgets: readonly Budget[], calls: readonly Call[], nowMs = NOW): Promise<void> {
  const list = await service.list();
  expect(list.budgets.map((b) => b.budget_id)).toEqual(budgets.map((b) => b.budget_id));
  budgets.forEach((b, i) => expect(list.budgets[i]?.spent_usd, b.budget_id).toBeCloseTo(oracle(b, calls, nowMs), 9));
}

const serviceOn = (door: ClickHouseDoor, clock: { now: number }) =>
  createBudgetService({ clickhouse: door, logger: silentLogger(), ctx: DEFAULT_QUERY_CONTEXT, reservationTimeoutMs: 60_000, decisionsFlushMs: 20, now: () => clock.now });

describe('budget spend loads', () => {
  let ch: ClickHouseClient;
  let door: ClickHouseDoor;
  let db: string;
  const calls = generate(22, 600);
  beforeAll(async () => {
    ({ ch, door, db } = await freshDatabase('budget_load'));
    await store(ch, db, calls);
  });

  it('without a budget, start-up and GET /v1/budgets read no spend', async () => {
    const spy = countingDoor(door);
    const service = serviceOn(spy.door, { now: NOW });
    await service.start();
    expect(await service.list()).toEqual({ version: null, budgets: [] });
    expect(await budgetListFromStore(spy.door, db, NOW, DEFAULT_QUERY_CONTEXT)).toEqual({ version: null, budgets: [] });
    expect(spy.reads).toEqual([]);
    await service.close();
  });

  it('spend per budget equals the sum over the stored calls of its scope and current period (apply, restart, store-only list)', async () => {
    expect(calls.some((c) => c.created_at_ms < Date.UTC(2026, 10, 1) && c.cost_usd)).toBe(true); // the previous month is there, and must not count
    const spy = countingDoor(door);
    const first = serviceOn(spy.door, { now: NOW });
    await first.start();
    await first.apply(BUDGETS, 'open');
    await expectSpend(first, BUDGETS, calls);
    // One statement for the whole set, whatever the table holds.
    expect(spy.reads).toHaveLength(1);

    // A new set: unchanged scopes keep their totals (no statement); a changed one is read.
    const next = [...BUDGETS.slice(0, 3), { ...(BUDGETS[3] as Budget), limit_usd: 99 }, { budget_id: 'agent-C-day', scope: { agent_id: 'C' }, period: 'day' as const, limit_usd: 5, mode: 'warn' as const }];
    await first.apply(next, 'open');
    expect(spy.reads).toHaveLength(2);
    expect(spy.reads[1]).toContain('arrayZip');
    await expectSpend(first, next, calls);

    const restarted = serviceOn(door, { now: NOW });
    await restarted.start();
    await expectSpend(restarted, next, calls);
    const fromStore = await budgetListFromStore(door, db, NOW, DEFAULT_QUERY_CONTEXT);
    next.forEach((b, i) => expect(fromStore.budgets[i]?.spent_usd, b.budget_id).toBeCloseTo(oracle(b, calls, NOW), 9));
    await Promise.all([first.close(), restarted.close()]);
  });

  it('rolls over to a new day and month while running: the totals restart from the calls of the new period', async () => {
    const clock = { now: NOW };
    const service = serviceOn(door, clock);
    await service.start();
    await service.apply(BUDGETS, 'open');
    // Calls already stored for later today count today; a call of tomorrow counts tomorrow.
    const tomorrow = NOW + 24 * HOUR;
    const later: Call[] = [{ call_id: randomUUID(), agent_id: 'A', tool_id: 'search', task_id: 't1', cost_usd: 1.25, created_at_ms: tomorrow }];
    await store(ch, db, later);
    service.onCallsStored(later);
    clock.now = tomorrow;
    await expectSpend(service, BUDGETS, [...calls, ...later], tomorrow);
    const nextMonth = Date.UTC(2026, 11, 1, 0, 0, 1);
    clock.now = nextMonth;
    const list = await service.list();
    expect(list.budgets.every((b) => b.spent_usd === 0)).toBe(true);
    await service.close();
  });
});

describe('a new set applied while calls are stored', () => {
  it('counts every call once: reported before, during and after the load, and reported late', async () => {
    const { ch, door, db } = await freshDatabase('budget_race');
    const base = generate(7, 200, [0]);
    await store(ch, db, base);
    const clock = { now: NOW };
    const stored: Call[] = [...base];
    // The writer's listener, wired once the service exists (as cli/serve.ts wires it).
    const listener: { service?: BudgetService } = {};
    const fresh = (seed: number) => generate(seed, 40, [0]);
    const storeAndReport = async (batch: Call[]) => {
      await store(ch, db, batch);
      stored.push(...batch);
      listener.service?.onCallsStored(batch);
    };
    const lates: Call[][] = [];
    // Around the spend statement: calls stored and reported just before it (the load counts them
    // and then sees their reports), stored before it but reported only after the new set is in
    // force (late), and stored and reported while it runs.
    const racing: ClickHouseDoor = {
      ...door,
      read: async (spec, params, ctx) => {
        if (spec.name !== 'budget_spend') return door.read(spec, params, ctx);
        await storeAndReport(fresh(1));
        const late = fresh(5);
        lates.push(late);
        await store(ch, db, late);
        stored.push(...late);
        const rows = await door.read(spec, params, ctx);
        await storeAndReport(fresh(2));
        return rows as never[];
      },
    };
    const service = serviceOn(racing, clock);
    listener.service = service;
    await service.start();
    await service.apply([BUDGETS[0] as Budget], 'open');
    await storeAndReport(fresh(3));
    await expectSpend(service, [BUDGETS[0] as Budget], stored);
    // A second set while the writer keeps storing; then the late calls' report arrives.
    const writing = (async () => {
      for (let i = 0; i < 5; i++) await storeAndReport(fresh(100 + i));
    })();
    await service.apply(BUDGETS, 'open');
    await writing;
    expect(lates).toHaveLength(2);
    for (const late of lates) service.onCallsStored(late);
    await expectSpend(service, BUDGETS, stored);
    // And a restart reads the same.
    const again = serviceOn(door, clock);
    await again.start();
    await expectSpend(again, BUDGETS, stored);
    await Promise.all([service.close(), again.close()]);
  });
});
