import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url).pathname;

/** Runs the heap-exhausting child; resolves with how it ended, or 'alive' if still running after `limitMs`. */
async function exhaust(watchdogMs: number, limitMs: number): Promise<{ ended: 'exit' | 'alive'; code: number | null; signal: string | null; ms: number; stderr: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tool-audit-watchdog-'));
  const child = spawn(process.execPath, ['--max-old-space-size=48', '--import', 'tsx', join(root, 'test/helpers/heap-exhaust-child.ts'), dataDir, String(watchdogMs)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const started = Date.now();
  const ended = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const timer = new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), limitMs));
  const first = await Promise.race([ended, timer]);
  const ms = Date.now() - started;
  if (first === 'alive') {
    child.kill('SIGKILL');
    await ended;
    return { ended: 'alive', code: null, signal: null, ms, stderr };
  }
  return { ended: 'exit', ...first, ms, stderr };
}

describe('watchdog: a fatal error ends the process', () => {
  it('without it, a heap exhaustion under embedded ClickHouse leaves a live, silent process', async () => {
    // The oracle of the next test: this is the failure the watchdog exists for.
    const r = await exhaust(0, 12_000);
    expect(r.stderr).toContain('heap out of memory');
    expect(r.ended).toBe('alive');
  }, 30_000);

  it('with it, the process ends with a non-zero status within seconds of the fatal error', async () => {
    const r = await exhaust(2_000, 25_000);
    expect(r.stderr).toContain('heap out of memory');
    expect(r.ended).toBe('exit');
    expect(r.code !== 0 || r.signal !== null).toBe(true);
    expect(r.signal).toBe('SIGKILL');
    expect(r.stderr).toContain('watchdog: the main thread has not answered');
    expect(r.ms).toBeLessThan(20_000);
  }, 40_000);
});
