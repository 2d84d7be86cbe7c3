/**
 * A process with embedded ClickHouse that writes, merges and exits leaves only active parts in its
 * data directory: the parts its merges replaced are removed before it closes the engine.
 * Oracle: the part directories on disk after the process exited, against the active parts a
 * fresh process loads from that directory (a part covered by a merged one loads as outdated).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url).pathname;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Runs test/helpers/merge-exit-child.ts on an embedded data directory; returns its stdout. */
function child(mode: 'write' | 'bare' | 'inspect', dataDir: string): string {
  const env: Record<string, string | undefined> = { ...process.env, TOOL_AUDIT_DATA_DIR: dataDir, CLICKHOUSE_DATABASE: 'tool_audit', LOG_LEVEL: 'warn' };
  delete env.CLICKHOUSE_URL;
  return execFileSync(process.execPath, ['--import', 'tsx', join(root, 'test/helpers/merge-exit-child.ts'), mode], { cwd: root, env, encoding: 'utf8' });
}

/** Every directory inside a table's data directory (store/<3>/<uuid>/), but `detached`: parts, and temporary parts. */
function partDirsOnDisk(dataDir: string): string[] {
  const store = join(dataDir, 'store');
  const out: string[] = [];
  for (const prefix of readdirSync(store)) {
    for (const table of readdirSync(join(store, prefix))) {
      const tableDir = join(store, prefix, table);
      if (!statSync(tableDir).isDirectory()) continue;
      for (const entry of readdirSync(tableDir)) {
        if (entry !== 'detached' && entry !== 'deduplication_logs' && statSync(join(tableDir, entry)).isDirectory()) out.push(join(tableDir, entry));
      }
    }
  }
  return out.sort();
}

const activeParts = (dataDir: string): string[] =>
  (JSON.parse(child('inspect', dataDir).trim().split('\n').pop() ?? '[]') as string[]).map((p) => resolve(p)).sort();

describe('replaced parts at process exit (embedded ClickHouse)', () => {
  it('leaves only active parts on disk after a process that merged exits through the commands’ close()', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'part-cleanup-'));
    dirs.push(dataDir);
    child('write', dataDir);
    const onDisk = partDirsOnDisk(dataDir);
    expect(onDisk.length).toBeGreaterThanOrEqual(4); // tool_invocations, call_keys, tool_durations, schema_migrations
    expect(onDisk).toEqual(activeParts(dataDir));
  });

  it('finds the replaced parts left behind by a process that closes without removing them (the oracle can fail)', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'part-cleanup-bare-'));
    dirs.push(dataDir);
    child('bare', dataDir);
    const onDisk = partDirsOnDisk(dataDir);
    const active = new Set(activeParts(dataDir));
    const left = onDisk.filter((d) => !active.has(d));
    // The four inserted parts of each OPTIMIZEd table at least (tool_invocations, call_keys, tool_durations).
    expect(left.length).toBeGreaterThanOrEqual(12);
  });
});
