/**
 * The ClickHouse users of the compose stack as deploy/clickhouse/initdb/01-users.sh creates them:
 * the script is run with a stand-in `clickhouse` command on PATH that records the SQL it is fed.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const INIT_SCRIPT = fileURLToPath(new URL('../../../deploy/clickhouse/initdb/01-users.sh', import.meta.url));

/** One GRANT statement. */
export interface Grant {
  privileges: string[];
  on: string;
  to: string;
  statement: string;
}

/** Runs the init script with a fake `clickhouse`; returns its exit status, stderr and the SQL it sent. */
export function runInitScript(env: Record<string, string>): { status: number | null; stderr: string; sql: string; args: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ta-initdb-'));
  const fake = join(dir, 'clickhouse');
  writeFileSync(fake, `#!/bin/bash\nprintf '%s\\n' "$*" > "${dir}/args"\ncat > "${dir}/sql"\n`);
  chmodSync(fake, 0o755);
  const r = spawnSync('bash', [INIT_SCRIPT], { env: { PATH: `${dir}:${process.env.PATH ?? ''}`, ...env }, encoding: 'utf8' });
  const readOr = (f: string) => {
    try {
      return readFileSync(join(dir, f), 'utf8');
    } catch {
      return '';
    }
  };
  return { status: r.status, stderr: r.stderr, sql: readOr('sql'), args: readOr('args') };
}

/** The statements of a SQL script (`;` at line end; `--` comment lines dropped). */
export function statements(sql: string): string[] {
  return sql
    .split('\n')
    .filter((l) => !l.trim().startsWith('--'))
    .join('\n')
    .split(/;\s*$/m)
    .map((s) => s.trim().replace(/\s+/g, ' '))
    .filter(Boolean);
}

/** The GRANT statements of a script. */
export function grants(sql: string): Grant[] {
  return statements(sql)
    .filter((s) => /^GRANT\b/i.test(s))
    .map((statement) => {
      const m = /^GRANT (.+) ON (\S+) TO (\S+)$/i.exec(statement);
      if (!m) throw new Error(`unexpected GRANT form: ${statement}`);
      return { privileges: (m[1] ?? '').split(',').map((p) => p.trim().toUpperCase()), on: m[2] ?? '', to: m[3] ?? '', statement };
    });
}

/** Dev passwords for the script, as docker-compose.yml defaults them. */
export const TEST_ENV = {
  CLICKHOUSE_DB: 'tool_audit',
  CLICKHOUSE_USER: 'tool_audit_admin',
  CLICKHOUSE_PASSWORD: 'admin-pw',
  CLICKHOUSE_INGEST_PASSWORD: 'ingest-pw',
  CLICKHOUSE_ANALYZER_PASSWORD: 'analyzer-pw',
  CLICKHOUSE_API_PASSWORD: 'api-pw',
  CLICKHOUSE_READER_PASSWORD: 'reader-pw',
};
