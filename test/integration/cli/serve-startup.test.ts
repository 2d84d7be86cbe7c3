/**
 * Start-up independent of history (issue 22), as an operator sees it: `serve` on a database that
 * already holds calls answers /healthz at once; /readyz says 503 and what is still loading (the
 * key filter, with its progress) until it is done; packets sent meanwhile are refused with a
 * retryable 503, never lost. After a clean stop the next start reads the filter's snapshot.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolCall } from '../../helpers/packets.ts';

const root = new URL('../../../', import.meta.url).pathname;
const CALLS = 3_000_000;

interface Start {
  healthzMs: number;
  readyMs: number;
  loadingSeen: Array<{ ok: boolean; detail?: string }>;
  refusedPacket?: { status: number; retryAfter: string | null };
  log: string;
}

/** Starts serve on the data directory, watches it until ready, then stops it with SIGTERM. */
async function startOnce(dataDir: string): Promise<Start> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    TOOL_AUDIT_DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    ANALYZER_ENABLED: 'false',
    DEDUP_INDEX_INTERVAL_MS: '0',
    HINTS_INTERVAL_MS: '0',
  };
  delete env.KAFKA_BROKERS;
  delete env.CLICKHOUSE_URL;
  const started = performance.now();
  const child = spawn(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = (p: string) => `http://127.0.0.1:${port}${p}`;
  const out: Start = { healthzMs: -1, readyMs: -1, loadingSeen: [], log: '' };
  try {
    for (let i = 0; out.readyMs < 0 && i < 1200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      try {
        if (out.healthzMs < 0) {
          if ((await fetch(url('/healthz'))).ok) out.healthzMs = performance.now() - started;
          continue;
        }
        const res = await fetch(url('/readyz'));
        const body = (await res.json()) as { checks: Record<string, { ok: boolean; detail?: string }> };
        if (res.ok) out.readyMs = performance.now() - started;
        else if (body.checks.key_filter) {
          out.loadingSeen.push(body.checks.key_filter);
          if (!out.refusedPacket) {
            const p = await fetch(url('/v1/packets'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([toolCall()]) });
            if (p.status !== 200) out.refusedPacket = { status: p.status, retryAfter: p.headers.get('retry-after') };
          }
        }
      } catch {
        /* not listening yet */
      }
    }
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited, log).toBe(0);
  out.log = log;
  return out;
}

describe('serve start-up on a database that holds calls (issue 22)', () => {
  it('answers /healthz at once, reports the key filter load in /readyz, refuses packets retryably meanwhile; the next start reads the snapshot', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tool-audit-startup-'));
    const filled = execFileSync(process.execPath, ['--import', 'tsx', join(root, 'test/helpers/fill-calls-child.ts'), dataDir, 'tool_audit', String(CALLS)], { cwd: root, encoding: 'utf8' });
    expect(Number(filled.trim())).toBe(CALLS);

    const first = await startOnce(dataDir);
    expect(first.healthzMs).toBeGreaterThan(0);
    expect(first.readyMs).toBeGreaterThan(first.healthzMs);
    // It listened before the filter load: /readyz told what was loading, with the keys it would read.
    expect(first.loadingSeen.length, first.log).toBeGreaterThan(0);
    expect(first.loadingSeen[0]?.ok).toBe(false);
    expect(first.loadingSeen.at(-1)?.detail).toMatch(/of 3,000,000 keys read from the stored rows/);
    expect(first.refusedPacket).toEqual({ status: 503, retryAfter: '5' });
    expect(first.log).toMatch(/"source":"segments","read":3000000/);

    const second = await startOnce(dataDir);
    expect(second.log).toMatch(/"source":"snapshot","read":0/);
    expect(second.healthzMs).toBeGreaterThan(0);
  }, 240_000);
});
