/**
 * The emitter's budget option against a real local HTTP server that answers as told: a deny
 * does not run the tool, allow and warn do, and a server that is down or slower than the bound
 * gives the configured fallback, counted in stats().
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BudgetDeniedError, createAuditEmitter, createMemoryTransport, type BudgetCheckOptions } from '../../../emit/index.ts';

const FIGURES = { budget_id: 'b', limit_usd: 1, spent_usd: 0.9, reserved_usd: 0, remaining_usd: 0.1, mode: 'deny' };
let answer: { decision: string; delayMs?: number; status?: number } = { decision: 'allow' };
const seen: Array<{ url?: string; auth?: string; body: Record<string, unknown> }> = [];
let server: Server;
let url = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ url: req.url, auth: req.headers.authorization, body: JSON.parse(body) as Record<string, unknown> });
      const a = answer;
      setTimeout(() => res.writeHead(a.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify({ decision: a.decision, budgets: [FIGURES], decision_id: 'd-1' })), a.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function emitter(budget: Partial<BudgetCheckOptions> = {}) {
  const transport = createMemoryTransport();
  const e = createAuditEmitter({ orchestrator: 'kernel', agentId: 'QA', transport, budget: { projectedCostUsd: (args) => Number(args.n) / 100, onUnavailable: 'allow', url, apiKey: 'k-0123456789abcdef', timeoutMs: 2000, ...budget } });
  return { e, transport };
}

describe('emitter budget checks', () => {
  it('asks with the call_id the call is recorded under, then runs the tool on allow', async () => {
    answer = { decision: 'allow' };
    const { e, transport } = emitter();
    let ran = '';
    await expect(e.invoke('search', { n: 7 }, (ctx) => ((ran = ctx.callId), 'ok'), { taskId: 't1' })).resolves.toBe('ok');
    const last = seen.at(-1);
    expect(last).toMatchObject({ url: '/v1/budget/check', auth: 'Bearer k-0123456789abcdef', body: { agent_id: 'QA', tool_id: 'search', task_id: 't1', projected_cost_usd: 0.07, call_id: ran } });
    await e.flush();
    expect(transport.batches.flat().some((m) => m.value.includes(ran))).toBe(true);
    expect(e.stats().budget).toEqual({ checks: 1, allowed: 1, warned: 0, denied: 0, fallbacks: 0 });
  });

  it('a deny does not run the tool and rejects with the decision; nothing is recorded', async () => {
    answer = { decision: 'deny' };
    const { e, transport } = emitter({ projectedCostUsd: 0.5 });
    let ran = false;
    const err = await e.invoke('search', {}, () => (ran = true)).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(BudgetDeniedError);
    expect((err as BudgetDeniedError).decision).toEqual({ decision: 'deny', budgets: [FIGURES], decision_id: 'd-1', fallback: false });
    expect(ran).toBe(false);
    await e.flush();
    expect(transport.batches.flat()).toEqual([]);
    expect(e.stats().budget).toMatchObject({ checks: 1, denied: 1, fallbacks: 0 });
  });

  it('a warn runs the tool', async () => {
    answer = { decision: 'warn' };
    const { e } = emitter();
    await expect(e.invoke('search', { n: 1 }, () => 42)).resolves.toBe(42);
    expect(e.stats().budget).toMatchObject({ warned: 1 });
  });

  it('a server slower than the bound: the fallback decides within about the bound, and is counted', async () => {
    answer = { decision: 'deny', delayMs: 400 };
    const allow = emitter({ timeoutMs: undefined }).e; // the default bound, 50 ms
    const t0 = performance.now();
    await expect(allow.invoke('search', { n: 1 }, () => 'ran')).resolves.toBe('ran');
    expect(performance.now() - t0).toBeLessThan(300);
    expect(allow.stats().budget).toEqual({ checks: 1, allowed: 1, warned: 0, denied: 0, fallbacks: 1 });
    const deny = emitter({ onUnavailable: 'deny', timeoutMs: 50 }).e;
    let ran = false;
    const err = (await deny.invoke('search', { n: 1 }, () => (ran = true)).catch((x: unknown) => x)) as BudgetDeniedError;
    expect(err).toBeInstanceOf(BudgetDeniedError);
    expect(err.decision).toMatchObject({ decision: 'deny', fallback: true, budgets: [] });
    expect(err.decision.reason).toContain('50 ms');
    expect(ran).toBe(false);
    expect(deny.stats().budget).toMatchObject({ denied: 1, fallbacks: 1 });
  });

  it('a server that is down or answers an error: the fallback decides', async () => {
    const down = createAuditEmitter({ orchestrator: 'kernel', agentId: 'QA', transport: createMemoryTransport(), budget: { projectedCostUsd: 1, onUnavailable: 'deny', url: 'http://127.0.0.1:9' } });
    await expect(down.invoke('search', {}, () => 'ran')).rejects.toBeInstanceOf(BudgetDeniedError);
    expect(down.stats().budget).toMatchObject({ fallbacks: 1, denied: 1 });
    answer = { decision: 'deny', status: 503 };
    const { e } = emitter();
    await expect(e.invoke('search', { n: 1 }, () => 'ran')).resolves.toBe('ran');
    expect(e.stats().budget).toMatchObject({ fallbacks: 1, allowed: 1 });
  });

  it('needs a server and a valid fallback', () => {
    expect(() => createAuditEmitter({ orchestrator: 'kernel', agentId: 'QA', transport: createMemoryTransport(), budget: { projectedCostUsd: 1, onUnavailable: 'allow' } })).toThrow(/server/);
    expect(() => createAuditEmitter({ orchestrator: 'kernel', agentId: 'QA', transport: createMemoryTransport(), budget: { projectedCostUsd: 1, onUnavailable: 'maybe' as 'allow', url } })).toThrow(/onUnavailable/);
  });
});
