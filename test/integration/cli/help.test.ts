/**
 * `--help` as a user types it, in a real process: usage on stdout, status 0, nothing started
 * (serve --help must not serve), for commands, subcommands and `help CMD`; an unknown command still
 * fails with status 2.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../..');
const run = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bin/tool-audit.mjs'), ...args], { encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH ?? '' } });

describe('tool-audit --help', () => {
  it.each([
    [['mcp', '--help'], 'usage: tool-audit mcp'],
    [['mcp', '--agent-id', 'a', '-h'], 'usage: tool-audit mcp'],
    [['quarantine', 'list', '--help'], 'usage: tool-audit quarantine'],
    [['serve', '--help'], 'usage: tool-audit serve'],
    [['help', 'budgets'], 'usage: tool-audit budgets'],
  ])('%j prints its usage and exits 0', (args, first) => {
    const r = run(...args);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.startsWith(first), r.stdout).toBe(true);
    expect(r.stderr).toBe('');
  });

  it('still refuses an unknown command with status 2', () => {
    const r = run('help', 'nonsense');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown command 'nonsense'");
  });
});
