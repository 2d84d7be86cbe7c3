/**
 * The audit log against the person it exists for: someone with SQL access to ClickHouse and
 * nothing else. `tool-audit serve` logs 20 calls and signs checkpoints; it is stopped; the
 * attacker deletes the 11th call, every leaf from its own on, the heads above and the subtree
 * roots, and rolls the builder's watermark back to the leaf before — the history rewritten with
 * the database's own tables agreeing with each other. Restarted, the builder re-logs what is left
 * and must refuse to sign (no new checkpoint, /readyz failing with the reason), also once the tree
 * has grown past the old size; `tool-audit verify` must fail naming the rewritten range against
 * the checkpoints the builder kept outside ClickHouse. The operator's recorded reset
 * (`audit-log accept-rewrite`) then lets it sign again, and verify reports the reset. The checkpoints themselves are checked by the Go oracle (independent note and
 * Merkle code) with the verifier key pinned from the start-up log line.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { toolCall } from '../../helpers/packets.ts';
import { testPort } from '../../helpers/ports.ts';
import { goAvailable, tlogOracle } from '../../helpers/tlog-oracle.ts';
import { seedDataDir } from '../../helpers/data-template.ts';

const root = new URL('../../../', import.meta.url).pathname;
const run = promisify(execFile);

interface Serve {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startServe(env: Record<string, string | undefined>, port: number): Serve {
  const child = spawn(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, url: `http://127.0.0.1:${port}`, stdout: () => out, exited };
}

// Two minutes: on 2 cores beside the heaviest files of the suite, serve took over a minute to reach
// its first builder round after the restart.
async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch {
      /* not yet */
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const post = (url: string, packets: unknown[]) => fetch(`${url}/v1/packets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(packets) });

describe('the audit log against an attacker with SQL access', () => {
  it('refuses to sign a rewritten history, and verify names the range against the checkpoints kept outside ClickHouse', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-rewrite-'));
    const dataDir = join(dir, 'data');
    const port = testPort();
    const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), TOOL_AUDIT_DATA_DIR: dataDir, LOG_LEVEL: 'info', AUDIT_LOG_HEAD_INTERVAL_MS: '200', AUDIT_LOG_GRACE_MS: '0' };
    delete env.KAFKA_BROKERS;
    delete env.CLICKHOUSE_URL;
    await seedDataDir(dataDir);
    const ledgerDir = `${dataDir}-audit-log`;
    const sql = async (statements: Array<{ sql: string; params?: Record<string, unknown>; select?: boolean }>) => {
      const file = join(dir, `sql-${Date.now()}.json`);
      writeFileSync(file, JSON.stringify(statements));
      const { stdout } = await run(process.execPath, ['--import', 'tsx', join(root, 'test/helpers/sql-child.ts'), file], { cwd: root, env, maxBuffer: 64 << 20 });
      return JSON.parse(stdout) as unknown[][];
    };
    const checkpointSize = () => Number(readFileSync(join(ledgerDir, 'checkpoint'), 'utf8').split('\n')[1]);

    // 1. Twenty calls, logged and signed; the verifier key pinned from the start-up log line.
    let serve = startServe(env, port);
    const base = Date.parse('2026-11-27T10:00:00Z');
    const calls = Array.from({ length: 20 }, (_, i) => toolCall({ args: { i }, created_at: new Date(base + i * 1000).toISOString() }, 'task-rewrite'));
    try {
      await until('serve', async () => ((await fetch(`${serve.url}/healthz`)).ok ? true : undefined));
      for (const c of calls) expect((await (await post(serve.url, [c])).json()) as object).toMatchObject({ accepted: 1 });
      await until('a checkpoint of every call', async () => (checkpointSize() >= 20 ? true : undefined));
    } finally {
      serve.child.kill('SIGTERM');
    }
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    const keyLine = serve.stdout().split('\n').find((l) => l.includes('audit log signing key'));
    const pinned = (JSON.parse(keyLine ?? '{}') as { verifier_key?: string }).verifier_key as string;
    expect(pinned).toMatch(/^tool-audit\/tool_audit\+[0-9a-f]{8}\+/);
    const signedSize = checkpointSize();
    const ledgerBefore = readFileSync(join(ledgerDir, 'checkpoints.jsonl'), 'utf8');
    const checkpoints = ledgerBefore.trim().split('\n').map((l) => (JSON.parse(l) as { note: string }).note);

    // 2. The attack, SQL only.
    const victim = calls[10]?.call_id as string;
    const [[leaf]] = (await sql([{ sql: "SELECT leaf_index AS i FROM {db:Identifier}.audit_log_leaves WHERE kind = 'tool_call' AND record_key = {k:String}", params: { k: victim }, select: true }])) as [[{ i: string }]];
    const cut = Number(leaf.i);
    const [[before]] = (await sql([{ sql: 'SELECT toUnixTimestamp64Milli(stored_at) AS t FROM {db:Identifier}.audit_log_leaves WHERE leaf_index = {i:UInt64}', params: { i: cut - 1 }, select: true }])) as [[{ t: string }]];
    await sql([
      { sql: 'ALTER TABLE {db:Identifier}.tool_invocations DELETE WHERE call_id = {id:UUID} SETTINGS mutations_sync = 2', params: { id: victim } },
      { sql: 'ALTER TABLE {db:Identifier}.call_keys DELETE WHERE call_id = {id:UUID} SETTINGS mutations_sync = 2', params: { id: victim } },
      { sql: 'ALTER TABLE {db:Identifier}.audit_log_leaves DELETE WHERE leaf_index >= {i:UInt64} SETTINGS mutations_sync = 2', params: { i: cut } },
      { sql: 'ALTER TABLE {db:Identifier}.audit_log_nodes DELETE WHERE 1 SETTINGS mutations_sync = 2' },
      { sql: 'ALTER TABLE {db:Identifier}.audit_log_heads DELETE WHERE tree_size > {i:UInt64} SETTINGS mutations_sync = 2', params: { i: cut } },
      { sql: "ALTER TABLE {db:Identifier}.analyzer_progress DELETE WHERE name = 'audit-log' SETTINGS mutations_sync = 2" },
      { sql: "INSERT INTO {db:Identifier}.analyzer_progress (name, watermark) VALUES ('audit-log', fromUnixTimestamp64Milli({t:Int64}, 'UTC'))", params: { t: Number(before.t) + 1 } },
    ]);

    // 3. Restarted: the builder re-logs what is left, and refuses to sign it, smaller or grown.
    serve = startServe(env, port);
    try {
      // The refusal, not another reason the check may give first on a loaded machine (no head
      // signed for a while, before the builder's first round after the restart).
      const refused = async () => {
        const r = (await (await fetch(`${serve.url}/readyz`)).json()) as { ready: boolean; checks: Record<string, { ok: boolean; detail?: string }> };
        return r.checks.audit_log?.ok === false && /fewer than|was rewritten/.test(r.checks.audit_log.detail ?? '') ? r : undefined;
      };
      const first = await until('/readyz to report the refusal', refused);
      expect(first.ready).toBe(false);
      // Smaller than the checkpoint, or (the auditor's findings on restart re-logged too) larger.
      expect(first.checks.audit_log?.detail).toMatch(new RegExp(`fewer than the ${signedSize} of its last checkpoint|the history it signed was rewritten`));
      expect((await fetch(`${serve.url}/readyz`)).status).toBe(503);
      const more = Array.from({ length: 15 }, (_, i) => toolCall({ args: { more: i }, created_at: new Date(base + 60_000 + i * 1000).toISOString() }, 'task-rewrite'));
      expect((await (await post(serve.url, more)).json()) as object).toMatchObject({ accepted: 15 });
      const grown = await until('the refusal of the grown tree', async () => {
        const r = await refused();
        return r?.checks.audit_log?.detail?.includes('was rewritten') ? r : undefined;
      });
      expect(grown.checks.audit_log?.detail).toContain(`its last checkpoint of that size says`);
      expect(serve.stdout()).toMatch(/audit log: no head signed: the log's first \d+ leaves give root/);
      // The builder's metric, and no head signed since: none above the cut in the database.
      expect(await (await fetch(`${serve.url}/metrics`)).text()).toMatch(/tool_audit_audit_log_refused 1/);
      const heads = (await (await fetch(`${serve.url}/v1/log/heads`)).json()) as { heads: Array<{ tree_size: number }> };
      expect(heads.heads.every((h) => h.tree_size <= cut)).toBe(true);
    } finally {
      serve.child.kill('SIGTERM');
    }
    expect((await serve.exited).code).toBe(0);
    // Nothing was signed over the rewritten history: the ledger is as it was.
    expect(readFileSync(join(ledgerDir, 'checkpoints.jsonl'), 'utf8')).toBe(ledgerBefore);

    // 4. verify names the rewritten range against the ledger.
    const verify = await run(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'verify', '--public-key', pinned], { cwd: root, env }).then(
      (r) => ({ code: 0, out: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
    );
    expect(verify.code, verify.out).toBe(1);
    const range = /history rewritten: leaves in \[(\d+), (\d+)\)/.exec(verify.out);
    expect(range, verify.out).not.toBeNull();
    expect(Number(range?.[1])).toBeLessThanOrEqual(cut);
    expect(Number(range?.[2])).toBeGreaterThan(cut);

    // 5. The operator keeps the rewritten history (recorded, with its reason): verify reports the
    // reset and checks the checkpoints after it; the builder signs again and /readyz is green.
    const accepted = await run(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'audit-log', 'accept-rewrite', '--reason', 'restored after incident 7; call removed by a DBA'], { cwd: root, env });
    expect(accepted.stdout).toMatch(/^recorded: the history of \d+ leaves/);
    const again = await run(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'verify', '--public-key', pinned], { cwd: root, env });
    expect(again.stdout).toContain('note     the operator accepted a rewritten history');
    expect(again.stdout).toContain('restored after incident 7');
    expect(again.stdout).toMatch(/\nverified; /);
    const reset = readFileSync(join(ledgerDir, 'checkpoints.jsonl'), 'utf8').slice(ledgerBefore.length).trim().split('\n').map((l) => JSON.parse(l) as { type: string });
    expect(reset.map((e) => e.type)).toEqual(['reset', 'checkpoint']);
    serve = startServe(env, port);
    try {
      await until('/readyz green again', async () => {
        const r = (await (await fetch(`${serve.url}/readyz`)).json()) as { ready: boolean; checks: Record<string, { ok: boolean }> };
        return r.ready && r.checks.audit_log?.ok ? r : undefined;
      });
      expect((await (await post(serve.url, [toolCall({ args: { after: 1 } }, 'task-rewrite')])).json()) as object).toMatchObject({ accepted: 1 });
      const size = checkpointSize();
      await until('a checkpoint after the reset', async () => (checkpointSize() > size ? true : undefined));
    } finally {
      serve.child.kill('SIGTERM');
    }
    expect((await serve.exited).code).toBe(0);

    // 6. Every checkpoint kept is genuine to independent code, with the pinned key.
    if (goAvailable()) {
      const all = readFileSync(join(ledgerDir, 'checkpoints.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; note: string }).filter((e) => e.type === 'checkpoint').map((e) => e.note);
      const oracle = await tlogOracle({ verifier_keys: [pinned], origin: 'tool-audit/tool_audit', checkpoints: all });
      expect(oracle.checkpoints.every((c) => c.ok)).toBe(true);
      expect(oracle.checkpoints[checkpoints.length - 1]?.size).toBe(signedSize);
    }
  }, 420_000);
});
