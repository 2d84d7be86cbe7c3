/**
 * What the browser tests and the web benchmark share: `tool-audit serve` as a child process on
 * a fresh embedded ClickHouse directory and a free port, the demo workload posted to it through
 * the CLI, and the machine's Chromium (Debian package) driven by playwright-core.
 */
import { spawn, execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';
import { testPort } from './ports.ts';
import { seedDataDir } from './data-template.ts';

const root = new URL('../../', import.meta.url).pathname;
const bin = join(root, 'bin/tool-audit.mjs');

/** The system Chromium: CHROMIUM_PATH, or the Debian package's binary; undefined when absent. */
export function chromiumPath(): string | undefined {
  return [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p): p is string => !!p && existsSync(p));
}

/** Launches the system Chromium headless. */
export function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium: apt-get install chromium (or set CHROMIUM_PATH)');
  // --no-sandbox: tests run as root in containers, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
}

/** A port below the ephemeral range that nothing listens on now (tried by binding it). */
async function freePort(): Promise<number> {
  for (;;) {
    const port = testPort();
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** A running `tool-audit serve`. */
export interface ServeProcess {
  url: string;
  /** The server's process id (benchmarks read its CPU time). */
  pid?: number;
  stop(): Promise<void>;
}

/** Starts `tool-audit serve` with a temporary data directory; `apiKeys` as TOOL_AUDIT_API_KEYS. */
export async function startServe(opts: { apiKeys?: string; env?: Record<string, string> } = {}): Promise<ServeProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tool-audit-web-'));
  const port = await freePort();
  const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), TOOL_AUDIT_DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...opts.env };
  delete env.KAFKA_BROKERS;
  delete env.CLICKHOUSE_URL;
  if (opts.apiKeys) env.TOOL_AUDIT_API_KEYS = opts.apiKeys;
  else delete env.TOOL_AUDIT_API_KEYS;
  await seedDataDir(dataDir);
  const child = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const end = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited: ${stderr}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > end) throw new Error(`serve did not come up: ${stderr}`);
    await new Promise((r) => setTimeout(r, 150));
  }
  return {
    url,
    ...(child.pid ? { pid: child.pid } : {}),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Posts the demo workload through `tool-audit demo`; returns its summary line. */
export async function loadDemo(url: string, opts: { tasks: number; seed: number; hours: number; apiKey?: string }): Promise<string> {
  const env: Record<string, string | undefined> = { ...process.env, TOOL_AUDIT_URL: url, LOG_LEVEL: 'warn' };
  if (opts.apiKey) env.TOOL_AUDIT_API_KEY = opts.apiKey;
  const { stdout } = await promisify(execFile)(process.execPath, [bin, 'demo', '--tasks', String(opts.tasks), '--seed', String(opts.seed), '--hours', String(opts.hours)], { env });
  return stdout;
}
