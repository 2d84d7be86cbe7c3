/**
 * The dedicated budget-check listener (BUDGET_CHECK_PORT) has the main port's edge: failed
 * authentications per address lock the address out (429 even with the right key), and each client
 * has a rate. Over real HTTP on a loopback port; the oracle is the limits given.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { checkListener, type CheckListenerDeps } from '../../../../api/budgets/check-listener.ts';

const KEY = 'check-listener-key-0123456789';
const BODY = JSON.stringify({ agent_id: 'a', tool_id: 't', projected_cost_usd: 0.01 });
let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

async function listen(edgeLimits: CheckListenerDeps['edgeLimits']): Promise<(key: string) => Promise<Response>> {
  server = createServer(checkListener({ apiKeys: [{ key: KEY, scopes: ['ingest'] }], maxBodyBytes: 1 << 16, edgeLimits, check: () => ({ decision: 'allow', budgets: [], decision_id: 'd' }) }));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/budget/check`;
  return (key) => fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: BODY });
}

describe('budget-check listener edge', () => {
  it('locks an address out after its failed authentications, the right key included', async () => {
    const post = await listen({ perMinute: 0, burst: 1, authFailuresPerMinute: 3 });
    expect((await post(KEY)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await post('wrong-key-0000000000000000')).status).toBe(401);
    const locked = await post(KEY);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await locked.text()).not.toContain(KEY);
  });

  it('limits each client to its rate', async () => {
    const post = await listen({ perMinute: 60, burst: 2, authFailuresPerMinute: 0 });
    expect([(await post(KEY)).status, (await post(KEY)).status, (await post(KEY)).status]).toEqual([200, 200, 429]);
  });

  it('without limits, answers every request', async () => {
    const post = await listen(undefined);
    for (let i = 0; i < 5; i++) expect((await post('wrong-key-0000000000000000')).status).toBe(401);
    expect((await post(KEY)).status).toBe(200);
  });
});
