/**
 * Budgets over HTTP on a real ClickHouse: a set refused whole, spend equal to SUM(cost_usd) of the
 * stored calls (kept current by the writer, rebuilt at restart), reservations released by ingest,
 * parallel checks that never overshoot a deny budget, and every decision recorded.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { createBudgetService, type BudgetService } from '../../../api/budgets/service.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import type { ClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { createLogger, silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { BUDGET_SPEND_VS_LIMIT } from '../../../queries/dashboard-budgets.ts';
import { createReadQueries } from '../../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { toolCall } from '../../helpers/packets.ts';

const INGEST = 'ingest-key-0123456789';
const READ = 'read-key-0123456789ab';
const ADMIN = 'admin-key-0123456789a';
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

let ch: ClickHouseClient;
let door: ClickHouseDoor;
let db: string;

function serve(clock: { now: number }): { app: FastifyInstance; budgets: BudgetService } {
  const budgets = createBudgetService({ clickhouse: door, logger: silentLogger(), ctx: DEFAULT_QUERY_CONTEXT, reservationTimeoutMs: 60_000, decisionsFlushMs: 20, now: () => clock.now });
  const writer = createSegmentWriter({ clickhouse: door, maxPacketBytes: 64 * 1024, dedupCacheEntries: 100, metrics: new MetricsRegistry(), logger: silentLogger(), onCallsStored: budgets.onCallsStored });
  const queries = createReadQueries(door, db, DEFAULT_QUERY_CONTEXT);
  const app = buildApp({
    ingest: { submit: (p) => writer.write(p) },
    budgets,
    read: { queries: { ...queries, budgets: async () => budgets.list() }, defaults: { windowDays: 3650, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 }, rateLimit: { perMinute: 0, burst: 0 } },
    readiness: async () => ({ ready: true, checks: {} }),
    metrics: new MetricsRegistry(),
    apiKeys: [
      { key: INGEST, scopes: ['ingest'] },
      { key: READ, scopes: ['read'] },
      { key: ADMIN, scopes: ['admin'] },
    ],
    maxBodyBytes: 1024 * 1024,
    logger: process.env.DBG ? createLogger('debug') : silentLogger(),
  });
  return { app, budgets };
}

const send = (app: FastifyInstance, method: 'PUT' | 'POST' | 'GET', url: string, key: string, body?: unknown) =>
  app.inject({ method, url, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
const check = (app: FastifyInstance, body: object) => send(app, 'POST', '/v1/budget/check', INGEST, body);

const BUDGETS = [
  { budget_id: 'agent-L-day', scope: { agent_id: 'L' }, period: 'day', limit_usd: 1, mode: 'deny' },
  { budget_id: 'search-month', scope: { tool_id: 'search_web' }, period: 'month', limit_usd: 0.5, mode: 'warn' },
  { budget_id: 'task-1', scope: { task_id: 'task-1' }, period: 'month', limit_usd: 100, mode: 'deny' },
];

beforeAll(async () => {
  ({ ch, door, db } = await freshDatabase('budgets'));
});
afterAll(async () => undefined);

describe('budgets', () => {
  const clock = { now: NOW };
  let s: ReturnType<typeof serve>;
  beforeAll(async () => {
    s = serve(clock);
    await s.budgets.start();
  });

  it('PUT /v1/budgets needs the admin scope and refuses a bad set whole, naming every offence', async () => {
    expect((await send(s.app, 'PUT', '/v1/budgets', INGEST, BUDGETS)).statusCode).toBe(403);
    const badSet = [{ ...BUDGETS[0], limit_usd: -1 }, { ...BUDGETS[1], period: 'week' }, BUDGETS[2], { ...BUDGETS[2] }];
    const refused = await send(s.app, 'PUT', '/v1/budgets', ADMIN, badSet);
    expect(refused.statusCode).toBe(400);
    const message = refused.json().message as string;
    for (const where of ['0.limit_usd', '1.period', '3.budget_id']) expect(message).toContain(where);
    expect((await send(s.app, 'GET', '/v1/budgets', READ)).json().budgets).toEqual([]);
    const ok = await send(s.app, 'PUT', '/v1/budgets', ADMIN, BUDGETS);
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('spent is SUM(cost_usd) of the stored calls in scope and period; a reservation is released when its call is stored', async () => {
    const reserved = await check(s.app, { agent_id: 'L', tool_id: 'search_web', task_id: 'task-1', projected_cost_usd: 0.3, call_id: 'c-reserve' });
    expect(reserved.json().decision).toBe('allow');
    const callId = randomUUID();
    const again = await check(s.app, { agent_id: 'L', tool_id: 'search_web', task_id: 'task-1', projected_cost_usd: 0.25, call_id: callId });
    expect(again.json().decision).toBe('warn'); // search-month: 0.3 + 0.25 > 0.5
    const calls = [
      toolCall({ call_id: callId, cost_usd: 0.125, created_at: iso(NOW - 1000) }),
      toolCall({ cost_usd: 0.0625, created_at: iso(NOW - 13 * 3600_000) }), // yesterday: month budgets only
      toolCall({ cost_usd: 7, created_at: iso(Date.UTC(2026, 9, 31, 23, 59)) }), // last month: no current period
      toolCall({ cost_usd: null, agent_id: 'M', created_at: iso(NOW) }, null),
      toolCall({ cost_usd: 0.01, agent_id: 'M', tool_id: 'fetch', created_at: iso(NOW) }, 'task-2'),
    ];
    expect((await send(s.app, 'POST', '/v1/packets', INGEST, calls)).statusCode).toBe(200);
    // A redelivery stores nothing, so it adds no spend.
    expect((await send(s.app, 'POST', '/v1/packets', INGEST, calls)).json()).toMatchObject({ accepted: 0, duplicates: 5 });
    const list = (await send(s.app, 'GET', '/v1/budgets', READ)).json();
    const sum = async (where: string) =>
      Number((await rows<{ s: number }>(ch, `SELECT sum(ifNull(cost_usd, 0)) AS s FROM {db:Identifier}.tool_invocations WHERE ${where}`, { db }))[0]?.s);
    const want = {
      'agent-L-day': await sum(`agent_id = 'L' AND toDate(created_at) = '2026-11-22'`),
      'search-month': await sum(`tool_id = 'search_web' AND toStartOfMonth(created_at) = '2026-11-01'`),
      'task-1': await sum(`task_id = 'task-1' AND toStartOfMonth(created_at) = '2026-11-01'`),
    };
    expect(want['agent-L-day']).toBeCloseTo(0.125, 9);
    for (const b of list.budgets) expect(b.spent_usd, b.budget_id).toBeCloseTo(want[b.budget_id as keyof typeof want], 9);
    // c-reserve's 0.3 is still held; callId's 0.25 was released when its call (0.125) was stored.
    expect(list.budgets.map((b: { reserved_usd: number }) => b.reserved_usd)).toEqual([0.3, 0.3, 0.3]);
  });

  it('rebuilds the same spend from ClickHouse after a restart', async () => {
    const before = (await send(s.app, 'GET', '/v1/budgets', READ)).json();
    const restarted = serve(clock);
    await restarted.budgets.start();
    const after = (await send(restarted.app, 'GET', '/v1/budgets', READ)).json();
    expect(after.version).toBe(before.version);
    expect(after.budgets.map((b: { spent_usd: number }) => b.spent_usd)).toEqual(before.budgets.map((b: { spent_usd: number }) => b.spent_usd));
    expect(after.budgets.every((b: { reserved_usd: number }) => b.reserved_usd === 0)).toBe(true); // reservations live in the owner only
  });

  it('parallel checks with call_ids never overshoot a deny budget', async () => {
    await send(s.app, 'PUT', '/v1/budgets', ADMIN, [{ budget_id: 'tight', scope: { agent_id: 'P' }, period: 'day', limit_usd: 1, mode: 'deny' }]);
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => check(s.app, { agent_id: 'P', tool_id: 't', projected_cost_usd: 0.07, call_id: `p-${i}` })));
    const decisions = answers.map((a) => a.json().decision);
    expect(decisions.filter((d) => d === 'allow')).toHaveLength(14); // 14 × 0.07 = 0.98; a 15th would make 1.05
    expect(decisions.filter((d) => d === 'deny')).toHaveLength(46);
    const [tight] = (await send(s.app, 'GET', '/v1/budgets', READ)).json().budgets;
    expect(tight.reserved_usd).toBeCloseTo(0.98, 9);
    clock.now += 60_001; // the reservations time out
    expect((await check(s.app, { agent_id: 'P', tool_id: 't', projected_cost_usd: 1 })).json().decision).toBe('allow');
  });

  it('records every decision, readable newest first and paged', async () => {
    await s.budgets.flush();
    const all = [];
    let cursor: string | null = null;
    do {
      const page = await send(s.app, 'GET', `/v1/budget/decisions?limit=25${cursor ? `&cursor=${cursor}` : ''}`, READ);
      expect(page.statusCode, page.body).toBe(200);
      all.push(...page.json().decisions);
      cursor = page.json().next_cursor;
    } while (cursor);
    expect(all).toHaveLength(63);
    const times = all.map((d) => d.decided_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(all[0]).toMatchObject({ decision: 'allow', request: { agent_id: 'P', call_id: null, projected_cost_usd: 1 }, budgets: [{ budget_id: 'tight', reserved_usd: 0 }] });
    const denies = (await send(s.app, 'GET', '/v1/budget/decisions?decision=deny&limit=100', READ)).json().decisions;
    expect(denies).toHaveLength(46);
    expect(denies[0].budgets[0]).toMatchObject({ budget_id: 'tight', mode: 'deny', limit_usd: 1 });
  });

  it('a budget counts model turns when its costs say so: spend from both tables, kept current by the writer and rebuilt at restart', async () => {
    const refused = await send(s.app, 'PUT', '/v1/budgets', ADMIN, [{ budget_id: 'x', scope: { tool_id: 'search_web', costs: 'models' }, period: 'day', limit_usd: 1, mode: 'deny' }]);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toContain('0.scope.costs');
    const set = [
      { budget_id: 'L-models-day', scope: { agent_id: 'L', costs: 'models' }, period: 'day', limit_usd: 0.5, mode: 'deny' },
      { budget_id: 'L-all-month', scope: { agent_id: 'L', costs: 'all' }, period: 'month', limit_usd: 100, mode: 'warn' },
      { budget_id: 'task-1-tools', scope: { task_id: 'task-1', costs: 'tools' }, period: 'month', limit_usd: 100, mode: 'warn' },
    ];
    expect((await send(s.app, 'PUT', '/v1/budgets', ADMIN, set)).statusCode).toBe(200);
    const turn = (over: Record<string, unknown>) => ({
      type: 'model_turn',
      turn: {
        turn_id: randomUUID(), task_id: 'task-1', agent_id: 'L', model: 'gpt-4o-mini-2024-07-18', provider: 'openai', input_tokens: 2000, output_tokens: 150,
        cached_input_tokens: null, cost_usd: null, cost_source: null, duration_ms: 800, status: 'success', error: null, requested_tool_calls: [],
        trace_id: null, span_id: null, created_at: iso(NOW - 2000), ...over,
      },
    });
    const turns = [
      turn({ cost_usd: 0.2, cost_source: 'reported' }),
      turn({}), // priced from the table at ingest
      turn({ agent_id: 'M', cost_usd: 3, cost_source: 'reported' }),
      turn({ cost_usd: 9, cost_source: 'reported', created_at: iso(Date.UTC(2026, 9, 30)) }), // last month
    ];
    const posted = await send(s.app, 'POST', '/v1/packets', INGEST, turns);
    expect(posted.json(), posted.body).toMatchObject({ accepted: 4 });
    const sum = async (table: string, where: string) =>
      Number((await rows<{ s: number }>(ch, `SELECT sum(ifNull(cost_usd, 0)) AS s FROM {db:Identifier}.${table} WHERE ${where}`, { db }))[0]?.s);
    const today = `toDate(created_at) = '2026-11-22'`;
    const month = `toStartOfMonth(created_at) = '2026-11-01'`;
    const want = async () => ({
      'L-models-day': await sum('model_turns', `agent_id = 'L' AND ${today}`),
      'L-all-month': (await sum('model_turns', `agent_id = 'L' AND ${month}`)) + (await sum('tool_invocations', `agent_id = 'L' AND ${month}`)),
      'task-1-tools': await sum('tool_invocations', `task_id = 'task-1' AND ${month}`),
    });
    const figures = async (app: FastifyInstance) =>
      Object.fromEntries((await send(app, 'GET', '/v1/budgets', READ)).json().budgets.map((b: { budget_id: string; spent_usd: number }) => [b.budget_id, b.spent_usd]));
    const first = await want();
    expect(first['L-models-day']).toBeGreaterThan(0.2); // the priced turn counted too
    expect(first['L-models-day']).toBeLessThan(0.5);
    for (const [id, spent] of Object.entries(await figures(s.app))) expect(spent, id).toBeCloseTo(first[id as keyof typeof first], 9);
    // Under its limit, the models budget allows; a tool call's projected cost is not a model cost.
    expect((await check(s.app, { agent_id: 'L', tool_id: 'search_web', task_id: 'task-1', projected_cost_usd: 0.4 })).json().decision).toBe('allow');
    await send(s.app, 'POST', '/v1/packets', INGEST, [turn({ cost_usd: 0.3, cost_source: 'reported' })]);
    const over = (await check(s.app, { agent_id: 'L', tool_id: 'search_web', task_id: 'task-1', projected_cost_usd: 0 })).json();
    expect(over.decision).toBe('deny');
    expect(over.budgets.find((b: { budget_id: string }) => b.budget_id === 'L-models-day').spent_usd).toBeCloseTo((await want())['L-models-day'], 9);
    const restarted = serve(clock);
    await restarted.budgets.start();
    const rebuilt = await want();
    for (const [id, spent] of Object.entries(await figures(restarted.app))) expect(spent, id).toBeCloseTo(rebuilt[id as keyof typeof rebuilt], 9);
  });

  it("the cost dashboard's spend-vs-limit panel counts model turns as the budgets do (the panel reads today by the real clock)", async () => {
    const set = [
      { budget_id: 'Q-models', scope: { agent_id: 'Q', costs: 'models' }, period: 'day', limit_usd: 1, mode: 'deny' },
      { budget_id: 'Q-all', scope: { agent_id: 'Q', costs: 'all' }, period: 'month', limit_usd: 1, mode: 'deny' },
      { budget_id: 'Q-tools', scope: { agent_id: 'Q' }, period: 'day', limit_usd: 1, mode: 'deny' },
    ];
    expect((await send(s.app, 'PUT', '/v1/budgets', ADMIN, set)).statusCode).toBe(200);
    const at = iso(Date.now() - 1000);
    const turn = { type: 'model_turn', turn: { turn_id: randomUUID(), task_id: 't-q', agent_id: 'Q', model: 'm', provider: null, input_tokens: null, output_tokens: null, cached_input_tokens: null, cost_usd: 0.25, cost_source: 'reported', duration_ms: 1, status: 'success', error: null, requested_tool_calls: [], trace_id: null, span_id: null, created_at: at } };
    const posted = await send(s.app, 'POST', '/v1/packets', INGEST, [turn, toolCall({ agent_id: 'Q', cost_usd: 0.125, created_at: at }, 't-q')]);
    expect(posted.json(), posted.body).toMatchObject({ accepted: 2 });
    const sum = async (table: string, where: string) =>
      Number((await rows<{ s: number }>(ch, `SELECT sum(ifNull(cost_usd, 0)) AS s FROM {db:Identifier}.${table} WHERE agent_id = 'Q' AND ${where}`, { db }))[0]?.s);
    const day = 'toDate(created_at) = today()';
    const month = 'toStartOfMonth(created_at) = toStartOfMonth(today())';
    const want = { 'Q-models': await sum('model_turns', day), 'Q-all': (await sum('model_turns', month)) + (await sum('tool_invocations', month)), 'Q-tools': await sum('tool_invocations', day) };
    expect(want).toEqual({ 'Q-models': 0.25, 'Q-all': 0.375, 'Q-tools': 0.125 });
    const panel = await door.read<{ budget_id: string; spent_usd: number }>(BUDGET_SPEND_VS_LIMIT, { db }, DEFAULT_QUERY_CONTEXT);
    expect(Object.fromEntries(panel.map((r) => [r.budget_id, r.spent_usd]))).toEqual(want);
  });

  it('the spend-vs-limit panel sums each scope of agent, tool and task (and none) as the stored calls do, whatever values no budget names', async () => {
    const at = iso(Date.now() - 1000);
    const calls = [
      toolCall({ agent_id: 'R1', tool_id: 'fetch_url', cost_usd: 0.5, created_at: at }, 't-r1'),
      toolCall({ agent_id: 'R1', tool_id: 'search_web', cost_usd: 0.25, created_at: at }, 't-r2'),
      toolCall({ agent_id: 'R2', tool_id: 'fetch_url', cost_usd: 0.125, created_at: at }, 't-r1'),
      toolCall({ agent_id: 'R3', tool_id: 'python_execute', cost_usd: 2, created_at: at }, 't-r3'),
    ];
    expect((await send(s.app, 'POST', '/v1/packets', INGEST, calls)).json()).toMatchObject({ accepted: 4 });
    const set = [
      { budget_id: 'R-all', scope: {}, period: 'month', limit_usd: 1000, mode: 'warn' },
      { budget_id: 'R-agent', scope: { agent_id: 'R1' }, period: 'day', limit_usd: 10, mode: 'warn' },
      { budget_id: 'R-tool', scope: { tool_id: 'fetch_url' }, period: 'day', limit_usd: 10, mode: 'warn' },
      { budget_id: 'R-task', scope: { task_id: 't-r1' }, period: 'day', limit_usd: 10, mode: 'warn' },
      { budget_id: 'R-agent-tool', scope: { agent_id: 'R1', tool_id: 'fetch_url' }, period: 'day', limit_usd: 10, mode: 'warn' },
      { budget_id: 'R-nobody', scope: { agent_id: 'nobody' }, period: 'day', limit_usd: 10, mode: 'warn' },
    ];
    expect((await send(s.app, 'PUT', '/v1/budgets', ADMIN, set)).statusCode).toBe(200);
    // The oracle: each scope summed straight from the stored calls (model turns count for none of these).
    const sum = async (where: string, period: string) =>
      Number((await rows<{ s: number }>(ch, `SELECT sum(ifNull(cost_usd, 0)) AS s FROM {db:Identifier}.tool_invocations WHERE ${where} AND ${period}`, { db }))[0]?.s);
    const day = 'toDate(created_at) = today()';
    const want = {
      'R-all': await sum('1', 'toStartOfMonth(created_at) = toStartOfMonth(today())'),
      'R-agent': await sum("agent_id = 'R1'", day),
      'R-tool': await sum("tool_id = 'fetch_url'", day),
      'R-task': await sum("task_id = 't-r1'", day),
      'R-agent-tool': await sum("agent_id = 'R1' AND tool_id = 'fetch_url'", day),
      'R-nobody': 0,
    };
    expect(want['R-agent']).toBeCloseTo(0.75, 9);
    const panel = await door.read<{ budget_id: string; spent_usd: number }>(BUDGET_SPEND_VS_LIMIT, { db }, DEFAULT_QUERY_CONTEXT);
    const got = Object.fromEntries(panel.map((r) => [r.budget_id, r.spent_usd]));
    for (const [id, v] of Object.entries(want)) expect(got[id], id).toBeCloseTo(v, 9);
  });
});
