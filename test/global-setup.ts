/**
 * One temporary folder per test run: every test process (and every process a test starts)
 * inherits TMPDIR pointing into it, so whatever a test leaves in os.tmpdir() — data
 * directories, grant probes, packed tarballs — is removed with the run, passed or failed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'tool-audit-tests-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(dir, { recursive: true, force: true });
  };
}
