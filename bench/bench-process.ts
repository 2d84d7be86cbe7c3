import { spawn } from 'node:child_process';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = new URL('../', import.meta.url).pathname;

/**
 * Runs `script` (a URL resolved against its caller's import.meta.url) with tsx in
 * a process of its own (embedded ClickHouse admits one data directory per process) as `<script>
 * <cmd> <JSON of o>`: its stderr lines go to `log`, and its answer is the JSON of its last stdout
 * line. A non-zero exit throws with the tail of its stderr.
 */
export async function benchChild<T>(script: URL, cmd: string, o: object, log: (s: string) => void): Promise<T> {
  const c = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(script), cmd, JSON.stringify(o)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  c.stdout.on('data', (d: Buffer) => (out += d.toString()));
  c.stderr.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-20_000);
    for (const line of d.toString().split('\n').filter(Boolean)) log(line);
  });
  const code = await new Promise<number | null>((r) => c.once('exit', r));
  if (code !== 0) throw new Error(`${basename(fileURLToPath(script))} ${cmd} exited (${code}):\n${err}`);
  return JSON.parse(out.trim().split('\n').pop() ?? '{}') as T;
}

/**
 * How a benchmark process runs and ends: `cleanup` (stop the servers and brokers it started)
 * runs once whichever way it ends — done, failed, or stopped by SIGINT/SIGTERM — so nothing is
 * left holding a data directory, a port or a broker.
 */

/** Runs `main`, then `cleanup`, and exits: 0 (or process.exitCode), 1 on failure, 130 on a signal. */
export function runBench(main: () => Promise<void>, cleanup: () => void, log: (s: string) => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      cleanup();
      process.exit(130);
    });
  }
  main().then(
    () => {
      cleanup();
      process.exit();
    },
    (err: unknown) => {
      log(`failed: ${(err as Error).stack ?? String(err)}`);
      cleanup();
      process.exit(1);
    },
  );
}
