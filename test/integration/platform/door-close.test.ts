/**
 * Closing the door on the embedded engine waits for the native work still running, so that the
 * process can exit right after: a connection chDB still held at exit was destroyed from the exit
 * handlers, which crashed about one stop in twenty with SIGSEGV (the compose-roles test's analyze
 * stop; 2–6 in 80 stops measured). The oracle is chDB's own rule: a process may open another data
 * directory only once every connection to the first is released.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('../../helpers/door-close-child.ts', import.meta.url));

describe('closing the door of the embedded engine', () => {
  it('lets a running statement answer, waits for work settled early, releases the engine, and the process exits with 0', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD], {
      env: { PATH: process.env.PATH ?? '', TOOL_AUDIT_DATA_DIR: mkdtempSync(join(tmpdir(), 'ta-close-')), CLICKHOUSE_DATABASE: 'default' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect({ status: r.status, signal: r.signal }, r.stderr.slice(-2000)).toEqual({ status: 0, signal: null });
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
    expect(out).toEqual({ early: 'rejected: AbortError', rows: [{ n: 20 }], otherDirectory: 'opened' });
  }, 180_000);
});
