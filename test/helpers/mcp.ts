/**
 * What the MCP gateway tests share: a `tool-audit serve` process on a fresh data directory,
 * the command lines of the gateway and of the real MCP servers (installed as dev dependencies),
 * the stored calls of a task, and Python's own args_hash of a list of args (the oracle).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { testPort } from './ports.ts';
import { seedDataDir } from './data-template.ts';

export const root = new URL('../../', import.meta.url).pathname;
export const ADMIN_KEY = 'mcp-admin-key-0123456789';
export const INGEST_KEY = 'mcp-ingest-key-0123456789';
const KEYS = `${ADMIN_KEY}:admin,read;${INGEST_KEY}:ingest,read`;

/** A served tool-audit on loopback. */
export interface Served {
  url: string;
  dir: string;
  env: Record<string, string>;
  stop(): Promise<number | null>;
}

/** A free-ish port (random; the tests run on loopback). */
export function randomPort(): number {
  return testPort();
}

/**
 * A served tool-audit for a test file: started before its tests, stopped (status 0 expected)
 * after them together with the children listed in `running`. `served` is filled in beforeAll.
 */
export function serveForSuite(): { served: Served; running: Listening[] } {
  const served = {} as Served;
  const running: Listening[] = [];
  beforeAll(async () => {
    Object.assign(served, await startServe());
  }, 120_000);
  afterAll(async () => {
    for (const r of running) await r.stop();
    if (served.stop) expect(await served.stop()).toBe(0);
  });
  return { served, running };
}

/** Starts `tool-audit serve` on embedded ClickHouse and waits for /readyz. */
export async function startServe(): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'tool-audit-mcp-'));
  const port = randomPort();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'KAFKA_BROKERS' && k !== 'CLICKHOUSE_URL' && k !== 'TOOL_AUDIT_URL') env[k] = v;
  Object.assign(env, { PORT: String(port), TOOL_AUDIT_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'warn', TOOL_AUDIT_API_KEYS: KEYS, ANALYZER_ENABLED: 'false', DEDUP_INDEX_INTERVAL_MS: '0' });
  await seedDataDir(join(dir, 'data'));
  const child = spawn(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'serve'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  await waitUp(`${url}/readyz`, 90_000, child);
  return { url, dir, env, stop: () => (child.kill('SIGTERM'), exited) };
}

async function waitUp(url: string, ms: number, child: ChildProcess): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > end) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** argv of `tool-audit mcp <flags…> -- <server…>` (stdio). */
export function gatewayArgs(flags: string[], server: string[]): string[] {
  return [join(root, 'bin/tool-audit.mjs'), 'mcp', ...flags, '--', ...server];
}

/** The environment the gateway runs with: delivering to the served tool-audit. */
export function gatewayEnv(served: Served, extra: Record<string, string> = {}): Record<string, string> {
  return { ...served.env, TOOL_AUDIT_URL: served.url, TOOL_AUDIT_API_KEY: INGEST_KEY, LOG_LEVEL: 'warn', ...extra };
}

/** The everything server (stdio by default). */
export function everythingServer(mode: 'stdio' | 'streamableHttp' = 'stdio'): string[] {
  return [process.execPath, join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), mode];
}

/** The filesystem server, allowed into one directory. */
export function filesystemServer(dir: string): string[] {
  return [process.execPath, join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'), dir];
}

/** A stored call as the task view serves it. */
export interface StoredCall {
  call_id: string;
  tool_id: string;
  agent_id: string;
  orchestrator: string;
  args: Record<string, unknown>;
  args_hash: string;
  status: string;
  error: string | null;
  duration_ms: number;
  result_summary: Record<string, unknown>;
}

/** The calls stored for a task (read key). */
export async function taskCalls(served: Served, taskId: string): Promise<StoredCall[]> {
  const res = await fetch(`${served.url}/v1/tasks/${encodeURIComponent(taskId)}`, { headers: { authorization: `Bearer ${INGEST_KEY}` } });
  if (res.status === 404) return [];
  const body = (await res.json()) as { invocations?: StoredCall[] };
  return body.invocations ?? [];
}

/** Waits until a task has n calls stored, and returns them. */
export async function waitForCalls(served: Served, taskId: string, n: number, ms = 20_000): Promise<StoredCall[]> {
  const end = Date.now() + ms;
  for (;;) {
    const calls = await taskCalls(served, taskId);
    if (calls.length >= n || Date.now() > end) return calls;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The Python interpreter of the test venv (npm test makes it), else the system's. */
export function python(): string {
  const venv = join(root, '.services/venv/bin/python');
  return existsSync(venv) ? venv : 'python3';
}

/** sha256(json.dumps(args, sort_keys=True)) by CPython itself, for each args object. */
export function pythonArgsHashes(argsList: unknown[]): string[] {
  const script = 'import sys, json, hashlib\nfor a in json.load(sys.stdin): print(hashlib.sha256(json.dumps(a, sort_keys=True).encode()).hexdigest())';
  return execFileSync(python(), ['-c', script], { input: JSON.stringify(argsList) }).toString().trim().split('\n');
}

/** A child process (an MCP server or a gateway) listening on a port, stopped by stop(). */
export interface Listening {
  port: number;
  stop(): Promise<void>;
}

/** Spawns argv (argv[0] the program) and waits until something accepts connections on port. */
export async function spawnListening(argv: string[], port: number, env: Record<string, string> = gatewayEnv0()): Promise<Listening> {
  const child = spawn(argv[0] as string, argv.slice(1), { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const end = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${argv.join(' ')} exited with ${child.exitCode}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > end) throw new Error(`nothing listens on ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, stop: () => (child.kill('SIGTERM'), exited) };
}

function gatewayEnv0(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return env;
}

/** argv of the SDK test server (test/helpers/mcp-test-server.ts) through tsx. */
export function testServer(mode: 'stdio' | 'http', port?: number): string[] {
  return [process.execPath, join(root, 'node_modules/tsx/dist/cli.mjs'), join(root, 'test/helpers/mcp-test-server.ts'), mode, ...(port === undefined ? [] : [String(port)])];
}
