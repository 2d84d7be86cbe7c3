import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolCall } from '../../helpers/packets.ts';
import { testPort } from '../../helpers/ports.ts';

const root = new URL('../../../', import.meta.url).pathname;

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

describe('tool-audit serve as a process (npm start)', () => {
  it('serves on embedded ClickHouse, ingests, and exits cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tool-audit-serve-'));
    const port = testPort();
    const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), TOOL_AUDIT_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    delete env.KAFKA_BROKERS;
    delete env.CLICKHOUSE_URL;
    const child = spawn(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(`http://127.0.0.1:${port}/readyz`, 60_000);
      const res = await fetch(`http://127.0.0.1:${port}/v1/packets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([toolCall(), toolCall({ status: 'ok' })]),
      });
      expect(await res.json()).toMatchObject({ accepted: 1, rejected: 1 });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, stderr).toBe(0);
  }, 90_000);

  it('fails at start with a clear message on bad configuration', async () => {
    const child = spawn(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'serve'], {
      env: { ...process.env, PORT: 'not-a-port' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('PORT');
  }, 60_000);

  it('refuses a public HOST without keys, with every other offence, before opening or migrating anything', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'tool-audit-serve-')), 'never-created');
    const child = spawn(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'serve'], {
      env: { ...process.env, PORT: 'abc', HOST: '0.0.0.0', TOOL_AUDIT_API_KEYS: '', TOOL_AUDIT_DATA_DIR: dataDir, CLICKHOUSE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('PORT');
    expect(stderr).toContain('TOOL_AUDIT_API_KEYS');
    expect(existsSync(dataDir)).toBe(false);
  }, 60_000);
});
