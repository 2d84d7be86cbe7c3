/**
 * Start-up independent of history, as an operator sees it: `serve` on a
 * database that already holds calls answers /healthz at once; /readyz says 503 and what is still
 * loading (the key filter, with its progress) until it is done; packets sent meanwhile are
 * judged at once against the stored keys (every key looked up exactly while the filter loads):
 * a new call is stored, a reuse of a stored call_id is refused (I1). After a clean stop the next
 * start reads the filter's snapshot, and the call sent during the load is a duplicate.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolCall } from '../../helpers/packets.ts';
import { testPort } from '../../helpers/ports.ts';

const root = new URL('../../../', import.meta.url).pathname;
const CALLS = 3_000_000;

interface Start {
  healthzMs: number;
  readyMs: number;
  loadingSeen: Array<{ ok: boolean; detail?: string }>;
  /** Verdicts of the packets sent while the key filter loaded, and of those sent once ready. */
  duringLoad?: string[];
  onceReady?: string[];
  log: string;
}

/** Starts serve on the data directory, watches it until ready, then stops it with SIGTERM. */
async function startOnce(dataDir: string, packets: object[], whenReady: object[] = []): Promise<Start> {
  const port = testPort();
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
  const post = async (body: object[]) => {
    const p = await fetch(url('/v1/packets'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = (await p.json()) as { results: Array<{ status: string; reason?: { code: string } }> };
    return answer.results.map((r) => `${r.status}${r.reason ? ` ${r.reason.code}` : ''}`);
  };
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
          // Sent once the load has counted what it reads (the packets are then judged while it reads).
          if (!out.duringLoad && /of [\d,]+ keys/.test(body.checks.key_filter.detail ?? '')) {
            out.duringLoad = await post(packets);
          }
        }
      } catch {
        /* not listening yet */
      }
    }
    if (out.readyMs > 0 && whenReady.length) out.onceReady = await post(whenReady);
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited, log).toBe(0);
  out.log = log;
  return out;
}

describe('serve start-up on a database that holds calls', () => {
  it('answers /healthz at once, reports the key filter load in /readyz, judges packets exactly meanwhile; the next start reads the snapshot', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tool-audit-startup-'));
    const filled = execFileSync(process.execPath, ['--import', 'tsx', join(root, 'test/helpers/fill-calls-child.ts'), dataDir, 'tool_audit', String(CALLS)], { cwd: root, encoding: 'utf8' });
    const [count, storedCallId] = filled.trim().split('\n');
    expect(Number(count)).toBe(CALLS);
    // A new call, and a different call under the call_id of a stored one (only ClickHouse knows it is stored).
    const fresh = toolCall();
    const reuse = toolCall({ call_id: storedCallId });

    const first = await startOnce(dataDir, [fresh, reuse]);
    expect(first.healthzMs).toBeGreaterThan(0);
    expect(first.readyMs).toBeGreaterThan(first.healthzMs);
    // It listened before the filter load: /readyz told what was loading, with the keys it would read.
    expect(first.loadingSeen.length, first.log).toBeGreaterThan(0);
    expect(first.loadingSeen[0]?.ok).toBe(false);
    expect(first.loadingSeen.some((c) => /of 3,000,000 keys read from the stored rows/.test(c.detail ?? ''))).toBe(true);
    expect(first.duringLoad).toEqual(['accepted', 'rejected I1_call_id_reused']);
    expect(first.log).toMatch(/"source":"segments","read":300000[01],/);

    const second = await startOnce(dataDir, [], [fresh]);
    // The snapshot and the rows stored since it (the call of the first start, when the snapshot
    // written at its close is older than the catch-up's slack), not the 3,000,000 stored calls.
    expect(second.log).toMatch(/"source":"snapshot","read":[01],/);
    expect(second.onceReady, 'the call sent during the first load was stored, once').toEqual(['duplicate']);
    expect(second.healthzMs).toBeGreaterThan(0);
  }, 240_000);
});
