/**
 * The budget thread: one desk on a worker thread, reached from the main thread's service and from
 * its own check listener (real HTTP) at once. Parallel checks through both doors never overshoot
 * a deny budget (oracle: the largest n with n × cost ≤ limit), stored calls release reservations,
 * the listener refuses what the main port refuses, and every decision is written once at close.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createBudgetService, type BudgetService } from '../../../../api/budgets/service.ts';
import { createThreadDesk, type ThreadDesk } from '../../../../api/budgets/thread.ts';
import type { KeyedRow } from '../../../../platform/clickhouse/door.ts';
import { silentLogger } from '../../../../platform/logger.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../../queries/sql.ts';
import { budgetDoor } from '../../../helpers/budget-door.ts';

const INGEST = 'ingest-key-0123456789';
const READ = 'read-key-012345678901';
const apiKeys = [
  { key: INGEST, scopes: ['ingest' as const] },
  { key: READ, scopes: ['read' as const] },
];

let open: BudgetService | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

async function started(): Promise<{ service: BudgetService; desk: ThreadDesk; url: string; decisions: KeyedRow[] }> {
  const { door, decisions } = budgetDoor();
  const desk = createThreadDesk({ reservationTimeoutMs: 60_000, apiKeys, maxBodyBytes: 4096, listen: { host: '127.0.0.1', port: 0 } }, silentLogger());
  const service = createBudgetService({ clickhouse: door, logger: silentLogger(), ctx: DEFAULT_QUERY_CONTEXT, reservationTimeoutMs: 60_000, decisionsFlushMs: 5, desk });
  open = service;
  await service.start();
  const port = desk.checkPort();
  expect(port).toBeGreaterThan(0);
  return { service, desk, url: `http://127.0.0.1:${port}/v1/budget/check`, decisions };
}

const post = (url: string, body: unknown, key = INGEST, init: RequestInit = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: typeof body === 'string' ? body : JSON.stringify(body), ...init });

describe('budget thread', () => {
  it('parallel checks through the listener and the service share one ledger and never overshoot', async () => {
    const { service, url, decisions } = await started();
    await service.apply([{ budget_id: 'cap', scope: { agent_id: 'P' }, period: 'day', limit_usd: 1, mode: 'deny' }], 'open');
    const cost = 0.07;
    let fit = 0;
    while ((fit + 1) * 7 <= 100) fit++; // n × 0.07 ≤ 1.00, in whole cents: 14
    const viaHttp = Array.from({ length: 20 }, (_, i) => post(url, { agent_id: 'P', tool_id: 't', projected_cost_usd: cost, call_id: `h-${i}` }).then(async (r) => ((await r.json()) as { decision: string }).decision));
    const viaService = Array.from({ length: 20 }, (_, i) => service.check({ agent_id: 'P', tool_id: 't', projected_cost_usd: cost, call_id: `s-${i}` }, 'open').then((a) => a.decision));
    const all = await Promise.all([...viaHttp, ...viaService]);
    expect(all.filter((d) => d === 'allow')).toHaveLength(fit);
    expect(all.filter((d) => d === 'deny')).toHaveLength(40 - fit);
    const [cap] = (await service.list()).budgets;
    expect(cap?.reserved_usd).toBeCloseTo(fit * cost, 9);

    // A stored call never checked counts too.
    service.onCallsStored([{ call_id: 'never-checked', agent_id: 'P', tool_id: 't', task_id: '', cost_usd: 0.02, created_at_ms: Date.now() }]);
    expect((await service.list()).budgets[0]).toMatchObject({ spent_usd: 0.02 });

    await service.close();
    open = undefined;
    expect(decisions).toHaveLength(40);
    expect(new Set(decisions.map((d) => d.key)).size).toBe(40);
    expect(decisions.filter((d) => (d.row as { decision: string }).decision === 'allow')).toHaveLength(fit);
  }, 30_000);

  it('releases a reservation when its call is stored', async () => {
    const { service, url } = await started();
    await service.apply([{ budget_id: 'b', scope: {}, period: 'month', limit_usd: 10, mode: 'warn' }], 'open');
    expect((await post(url, { agent_id: 'a', tool_id: 't', projected_cost_usd: 3, call_id: 'c-1' })).status).toBe(200);
    expect((await service.list()).budgets[0]).toMatchObject({ spent_usd: 0, reserved_usd: 3, remaining_usd: 7 });
    service.onCallsStored([{ call_id: 'c-1', agent_id: 'a', tool_id: 't', task_id: '', cost_usd: 1.25, created_at_ms: Date.now() }]);
    expect((await service.list()).budgets[0]).toMatchObject({ spent_usd: 1.25, reserved_usd: 0, remaining_usd: 8.75 });
  }, 30_000);

  it('refuses on the listener what the main port refuses', async () => {
    const { url } = await started();
    const body = { agent_id: 'a', tool_id: 't', projected_cost_usd: 1 };
    const none = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
    expect([none.status, none.headers.get('www-authenticate')]).toEqual([401, 'Bearer']);
    expect((await post(url, body, 'not-a-key-0000000000')).status).toBe(401);
    expect(await (await post(url, body, READ)).json()).toEqual({ error: 'forbidden', message: "this key lacks the 'ingest' scope" });
    const malformed = await post(url, '{"agent_id":');
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { message: string }).message).toMatch(/^malformed JSON/);
    const wrong = (await (await post(url, { ...body, projected_cost_usd: -1, extra: 1 })).json()) as { error: string; message: string };
    expect(wrong.error).toBe('bad_request');
    expect(wrong.message).toMatch(/projected_cost_usd/);
    expect(wrong.message).toMatch(/extra/);
    expect((await post(url, { ...body, agent_id: 'x'.repeat(5000) })).status).toBe(413);
    expect((await fetch(url, { headers: { authorization: `Bearer ${INGEST}` } })).status).toBe(405);
    expect((await post(url.replace('/v1/budget/check', '/v1/budgets'), body)).status).toBe(404);
  }, 30_000);
});

describe('a budget thread that dies', () => {
  it('says so in health(), and /readyz is 503 naming it, its detail for keyed callers only', async () => {
    const { buildApp } = await import('../../../../api/app.ts');
    const { MetricsRegistry } = await import('../../../../platform/metrics.ts');
    const { desk, service } = await started();
    expect(desk.health()).toEqual({ ok: true });
    const app = buildApp({
      readiness: async () => {
        const checks = { clickhouse: { ok: true }, budget_thread: desk.health() };
        return { ready: Object.values(checks).every((c) => c.ok), checks, jobs: { auditor: { ok: false, failures: 3, detail: 'SELECT … FROM db.violations at clickhouse-7:9000' } } };
      },
      metrics: new MetricsRegistry(),
      apiKeys,
      maxBodyBytes: 4096,
      logger: silentLogger(),
    });
    const readyz = async (key?: string) => {
      const r = await app.inject({ method: 'GET', url: '/readyz', headers: key ? { authorization: `Bearer ${key}` } : {} });
      return { status: r.statusCode, body: r.json() as { checks: Record<string, { ok: boolean; detail?: string }>; jobs: Record<string, { detail?: string }> } };
    };
    expect((await readyz()).status).toBe(200);
    expect((await readyz()).body.jobs.auditor).toEqual({ ok: false, failures: 3 });
    expect((await readyz(READ)).body.jobs.auditor?.detail).toContain('clickhouse-7');
    // A note the thread cannot read throws in its message handler: the thread dies.
    desk.recordCalls({ length: 1 } as never);
    await expect.poll(() => desk.health().ok, { timeout: 5000 }).toBe(false);
    await expect(service.check({ agent_id: 'P', tool_id: 't', projected_cost_usd: 0.01 }, 'open')).rejects.toThrow(/budget thread stopped/);
    const anonymous = await readyz();
    expect(anonymous.status).toBe(503);
    expect(anonymous.body.checks.budget_thread).toEqual({ ok: false });
    const keyed = await readyz(READ);
    expect(keyed.body.checks.budget_thread?.detail).toMatch(/^budget thread stopped: /);
    // An ingest-only key is not a read key: no details.
    expect((await readyz(INGEST)).body.checks.budget_thread).toEqual({ ok: false });
    await app.close();
  });
});
