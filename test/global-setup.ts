/**
 * One temporary folder per test run: every test process (and every process a test starts)
 * inherits TMPDIR pointing into it, so whatever a test leaves in os.tmpdir() — data
 * directories, grant probes, packed tarballs — is removed with the run, passed or failed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'tool-audit-tests-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  // Embedded ClickHouse: one migrated data directory for the whole run, copied by each test
  // process (helpers/clickhouse.ts) rather than migrated ~50 times over (~4 s of CPU each).
  const templateBefore = process.env.TOOL_AUDIT_TEST_TEMPLATE_DIR;
  if (!process.env.CLICKHOUSE_URL) {
    const template = join(dir, 'template-data');
    execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./helpers/template-data.ts', import.meta.url)), template], { stdio: ['ignore', 'ignore', 'inherit'] });
    process.env.TOOL_AUDIT_TEST_TEMPLATE_DIR = template;
  }
  return () => {
    if (templateBefore === undefined) delete process.env.TOOL_AUDIT_TEST_TEMPLATE_DIR;
    else process.env.TOOL_AUDIT_TEST_TEMPLATE_DIR = templateBefore;
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(dir, { recursive: true, force: true });
  };
}
