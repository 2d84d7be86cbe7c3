/**
 * The embedded engine starts as configured, in a process of its own (the first connection of a
 * process decides the engine's server settings): CLICKHOUSE_MERGE_NICE becomes the nice value of
 * its merge threads (read back from ClickHouse and from /proc), and CLICKHOUSE_EMBEDDED_CONFIG's
 * users file decides what its statements may do.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { grantsConfig } from '../../helpers/embedded-grants.ts';

const CHILD = fileURLToPath(new URL('../../helpers/engine-settings-child.ts', import.meta.url));

function run(env: Record<string, string>): { nice: string; grants: string[]; mergeThreadNice: number[] } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD], {
    env: { PATH: process.env.PATH ?? '', TOOL_AUDIT_DATA_DIR: mkdtempSync(join(tmpdir(), 'ta-engine-')), CLICKHOUSE_DATABASE: 'default', ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { nice: string; grants: string[]; mergeThreadNice: number[] };
}

describe('the embedded engine as configured', () => {
  it('runs its merges at CLICKHOUSE_MERGE_NICE', () => {
    const r = run({ CLICKHOUSE_MERGE_NICE: '7' });
    expect(r.nice).toBe('7');
    // Merge threads at work are at 7 (0 for the moment between two merges, when ClickHouse resets it).
    expect(r.mergeThreadNice).toContain(7);
    expect(r.mergeThreadNice.filter((n) => n !== 0 && n !== 7)).toEqual([]);
    expect(run({}).nice).toBe('19');
  }, 240_000);

  it('takes its users and grants from CLICKHOUSE_EMBEDDED_CONFIG', () => {
    const r = run({ CLICKHOUSE_EMBEDDED_CONFIG: grantsConfig(['GRANT SELECT ON system.*']) });
    expect(r.grants).toEqual(['GRANT SELECT ON system.* TO default']);
    // CREATE TABLE is refused under these grants, so no merge ran.
    expect(r.mergeThreadNice).toEqual([]);
  }, 240_000);
});
