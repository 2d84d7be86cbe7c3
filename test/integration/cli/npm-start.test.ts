import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { toolCall } from '../../helpers/packets.ts';
import { testPort } from '../../helpers/ports.ts';

const root = new URL('../../../', import.meta.url).pathname;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A started process with its stderr so far and its exit. */
interface Started {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<Exit>;
}

const dataDirs: string[] = [];
/** Server pids the tests saw, killed afterwards if still alive so a failing run leaves nothing behind. */
const serverPids = new Set<number>();

afterEach(() => {
  for (const pid of serverPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone, as it should be */
    }
  }
  serverPids.clear();
  for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function freshDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tool-audit-npm-start-'));
  dataDirs.push(dir);
  return dir;
}

const randomPort = () => testPort();

/** Embedded ClickHouse on `dataDir`, no Kafka; info logs so the server's pid can be read from them. */
function serveEnv(port: number, dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), TOOL_AUDIT_DATA_DIR: dataDir, LOG_LEVEL: 'info' };
  delete env.KAFKA_BROKERS;
  delete env.CLICKHOUSE_URL;
  env.npm_config_update_notifier = 'false';
  return env;
}

function start(command: string, args: string[], env: NodeJS.ProcessEnv, detached = false): Started {
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached });
  let stderr = '';
  child.stdout?.on('data', () => {});
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
    // Every log line carries the pid of the process that serves, whichever process npm started.
    for (const m of d.toString().matchAll(/"pid":(\d+)/g)) serverPids.add(Number(m[1]));
  });
  const exited = new Promise<Exit>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, stderr: () => stderr.slice(-4000), exited };
}

/** Resolves when `url` answers 2xx; rejects if the process exits first or `ms` pass. */
async function waitReady(url: string, p: Started, ms: number): Promise<void> {
  let gone: Exit | undefined;
  void p.exited.then((e) => (gone = e));
  const end = Date.now() + ms;
  for (;;) {
    if (gone) throw new Error(`exited (${JSON.stringify(gone)}) before ${url} came up:\n${p.stderr()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > end) throw new Error(`${url} did not come up:\n${p.stderr()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The exit, or a timeout marker if the process is still running after `ms`. */
function exitWithin(p: Started, ms: number): Promise<Exit | 'still running'> {
  return Promise.race([p.exited, new Promise<'still running'>((r) => setTimeout(() => r('still running'), ms))]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start under a process manager', () => {
  it('SIGTERM to npm stops the server; the data directory then opens again with the packet in it', async () => {
    const dataDir = freshDataDir();
    const port = randomPort();
    const npm = start('npm', ['start'], serveEnv(port, dataDir));
    await waitReady(`http://127.0.0.1:${port}/readyz`, npm, 60_000);

    const packet = toolCall({ created_at: new Date().toISOString() });
    const res = await fetch(`http://127.0.0.1:${port}/v1/packets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([packet]),
    });
    expect(await res.json()).toMatchObject({ accepted: 1, rejected: 0 });

    // What a process manager does: SIGTERM to the process it started, here npm.
    npm.child.kill('SIGTERM');
    expect(await exitWithin(npm, 30_000), npm.stderr()).toEqual({ code: 0, signal: null });
    // npm exits only after the server has: nothing it started is left running.
    for (const pid of serverPids) expect(alive(pid), `pid ${pid} still running`).toBe(false);

    // chDB allows one process per data directory: this start fails if anything still holds it.
    const port2 = randomPort();
    const again = start(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'serve'], serveEnv(port2, dataDir));
    try {
      await waitReady(`http://127.0.0.1:${port2}/readyz`, again, 60_000);
      const read = await fetch(`http://127.0.0.1:${port2}/v1/tools/search_web/invocations`);
      expect(read.status).toBe(200);
      const body = (await read.json()) as { invocations: { call_id: string }[] };
      expect(body.invocations.map((i) => i.call_id)).toContain(packet.call_id);
    } finally {
      again.child.kill('SIGTERM');
    }
    expect(await exitWithin(again, 30_000), again.stderr()).toEqual({ code: 0, signal: null });
  }, 180_000);

  it('Ctrl-C (SIGINT to the whole process group, npm and the server) stops it cleanly too', async () => {
    const dataDir = freshDataDir();
    const port = randomPort();
    // detached: its own process group, as a terminal's foreground job is.
    const npm = start('npm', ['start'], serveEnv(port, dataDir), true);
    await waitReady(`http://127.0.0.1:${port}/readyz`, npm, 60_000);
    const group = npm.child.pid;
    if (!group) throw new Error('npm did not start');
    process.kill(-group, 'SIGINT');
    expect(await exitWithin(npm, 30_000), npm.stderr()).toEqual({ code: 0, signal: null });
    for (const pid of serverPids) expect(alive(pid), `pid ${pid} still running`).toBe(false);
  }, 120_000);
});
