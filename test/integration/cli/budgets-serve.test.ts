/**
 * Budgets end to end on `tool-audit serve` as a process: `tool-audit budgets apply FILE` (admin
 * key), the emitter checking before each call over HTTP, a denied tool that never runs, spend
 * counted from the stored calls, and the same spend after a restart. The emitter asks the
 * dedicated check port (BUDGET_CHECK_PORT, served by the budget thread) and the figures are read
 * on the main port: one ledger whichever door.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { auditResult, BudgetDeniedError, createAuditEmitter } from '../../../emit/index.ts';
import { testPort } from '../../helpers/ports.ts';
import { seedDataDir } from '../../helpers/data-template.ts';

const root = new URL('../../../', import.meta.url).pathname;
const KEYS = 'admin-key-0123456789a:admin;ingest-key-0123456789:ingest,read';

async function waitFor(url: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > end) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function start(env: Record<string, string | undefined>, port: number): Promise<{ child: ChildProcess; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waitFor(`http://127.0.0.1:${port}/readyz`, 60_000);
  return { child, stop: () => (child.kill('SIGTERM'), exited) };
}

describe('budgets on a served process', () => {
  it('apply FILE, check before each call, deny does not run the tool, spend survives a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tool-audit-budgets-'));
    const port = testPort();
    const url = `http://127.0.0.1:${port}`;
    const checkUrl = `http://127.0.0.1:${port + 1}`;
    const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), TOOL_AUDIT_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'warn', TOOL_AUDIT_API_KEYS: KEYS, ANALYZER_ENABLED: 'false', DEDUP_INDEX_INTERVAL_MS: '0', BUDGET_CHECK_PORT: String(port + 1) };
    delete env.KAFKA_BROKERS;
    delete env.CLICKHOUSE_URL;
    await seedDataDir(env.TOOL_AUDIT_DATA_DIR as string);
    let server = await start(env, port);
    try {
      const file = join(dir, 'budgets.json');
      writeFileSync(file, JSON.stringify([{ budget_id: 'qa-day', scope: { agent_id: 'QA' }, period: 'day', limit_usd: 0.1, mode: 'deny' }]));
      const cli = (key: string) => promisify(execFile)(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'budgets', 'apply', file], { env: { ...env, TOOL_AUDIT_URL: url, TOOL_AUDIT_API_KEY: key } });
      await expect(cli('ingest-key-0123456789')).rejects.toThrow(/403/);
      expect((await cli('admin-key-0123456789a')).stdout).toMatch(/applied 1 budget\(s\).*version \d+/);

      const audit = createAuditEmitter({ orchestrator: 'kernel', agentId: 'QA', http: { url, apiKey: 'ingest-key-0123456789' }, budget: { projectedCostUsd: 0.04, onUnavailable: 'deny', timeoutMs: 2000, url: checkUrl } });
      let runs = 0;
      const tool = async () => (runs++, auditResult('ok', { costUsd: 0.04 }));
      const outcomes = [];
      for (let i = 0; i < 4; i++) outcomes.push(await audit.invoke('search', {}, tool).then(() => 'ran', (e: unknown) => (e instanceof BudgetDeniedError ? e.decision.decision : 'error')));
      expect(outcomes).toEqual(['ran', 'ran', 'deny', 'deny']);
      expect(runs).toBe(2);
      expect(audit.stats().budget).toEqual({ checks: 4, allowed: 2, warned: 0, denied: 2, fallbacks: 0 });
      await audit.close();
      const auth = { authorization: 'Bearer ingest-key-0123456789' };
      const figures = async () => ((await (await fetch(`${url}/v1/budgets`, { headers: auth })).json()) as { budgets: Array<{ spent_usd: number; reserved_usd: number }> }).budgets[0];
      await expect.poll(figures, { timeout: 10_000 }).toMatchObject({ spent_usd: 0.08, reserved_usd: 0 });

      expect(await server.stop()).toBe(0);
      server = await start(env, port);
      expect(await figures()).toMatchObject({ spent_usd: 0.08, reserved_usd: 0 });
      const denied = (await (await fetch(`${url}/v1/budget/decisions?decision=deny`, { headers: auth })).json()) as { decisions: unknown[] };
      expect(denied.decisions).toHaveLength(2); // recorded before the first process stopped
      // The check port after the restart: the same ledger as the main port, and only checks there.
      const viaCheckPort = (await (await fetch(`${checkUrl}/v1/budget/check`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ agent_id: 'QA', tool_id: 'search', projected_cost_usd: 0.01 }) })).json()) as { decision: string; budgets: unknown[] };
      expect(viaCheckPort).toMatchObject({ decision: 'allow', budgets: [{ budget_id: 'qa-day', spent_usd: 0.08, reserved_usd: 0 }] });
      expect((await fetch(`${checkUrl}/v1/budgets`, { headers: auth })).status).toBe(404);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
