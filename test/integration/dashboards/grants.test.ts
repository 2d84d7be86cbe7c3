/**
 * The grants of deploy/clickhouse/initdb tried for real on embedded ClickHouse: each role's
 * GRANTs (as the init script issues them) are given to chDB's user, and the role's real code
 * runs — ingest writes a workload, the analyzer links and audits it, the reader runs every
 * dashboard panel — while ALTER, DELETE, UPDATE, TRUNCATE, DROP, CREATE, OPTIMIZE and writes
 * outside the role are refused with ACCESS_DENIED.
 *
 * chDB cannot execute CREATE USER (its only access storage is users.xml, read-only), so the user
 * statements themselves are checked by ClickHouse's parser (formatQuery) and their grants are
 * moved onto chDB's `default` user; each role runs in its own process (grants-probe.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { testClickHouse, rows } from '../../helpers/clickhouse.ts';
import { grants, runInitScript, statements, TEST_ENV } from '../../unit/deploy/users-sql.ts';
import { roleGrants } from '../../helpers/embedded-grants.ts';

const DB = 'grants_probe';
const PROBE = fileURLToPath(new URL('./grants-probe.ts', import.meta.url));
const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = runInitScript({ ...TEST_ENV, CLICKHOUSE_DB: DB });
const grantsOf = (user: string) => roleGrants(grants(script.sql), user);

interface ProbeResult {
  grants: string[];
  did: Record<string, unknown>;
  forbidden: Record<string, string>;
}

function probe(dataDir: string, role: string, given: string[]): ProbeResult {
  const r = spawnSync(process.execPath, ['--import', 'tsx', PROBE, JSON.stringify({ dataDir, db: DB, role, grants: given })], {
    cwd: root,
    encoding: 'utf8',
    timeout: 240_000,
  });
  if (r.status !== 0) throw new Error(`probe ${role} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const line = r.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as ProbeResult;
}

const DESTRUCTIVE = ['alter_delete', 'alter_update', 'alter_add_column', 'alter_modify_ttl', 'lightweight_delete', 'truncate', 'drop_table', 'drop_database', 'create_table', 'optimize'];

function expectRefused(r: ProbeResult, names: string[]): void {
  for (const n of names) expect(r.forbidden[n], n).toMatch(/ACCESS_DENIED|Not enough privileges/);
}

describe('ClickHouse users of the compose stack, on real access control (chDB)', () => {
  it('parses every statement of the init script with ClickHouse', async () => {
    expect(script.status, script.stderr).toBe(0);
    const ch = await testClickHouse();
    for (const s of statements(script.sql)) {
      const [r] = await rows<{ f: string }>(ch, 'SELECT formatQuery({s:String}) AS f', { s });
      expect(r?.f, s).toMatch(/^(CREATE USER|GRANT) /);
    }
  });

  it('lets each role do its work and nothing destructive', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ta-grants-data-'));
    const admin = probe(dataDir, 'admin', []);
    expect((admin.did.migrated as string[]).length).toBeGreaterThan(0);

    const ingest = probe(dataDir, 'ingest', grantsOf('tool_audit_ingest'));
    expect(ingest.grants.join('\n')).not.toMatch(/ALTER|DELETE|TRUNCATE|DROP/);
    expect(ingest.did.accepted).toBeGreaterThan(50);
    expect(ingest.did.rejected).toBe(2);
    expect(ingest.did.redelivered_duplicates).toBe(20);
    expectRefused(ingest, [...DESTRUCTIVE, 'insert_violations', 'select_violations']);

    const analyzer = probe(dataDir, 'analyzer', grantsOf('tool_audit_analyzer'));
    expect((analyzer.did.analyzer as { pairsInserted: number }).pairsInserted).toBeGreaterThan(0);
    expect((analyzer.did.auditor as { recorded: number }).recorded).toBeGreaterThan(0);
    expectRefused(analyzer, [...DESTRUCTIVE, 'insert_invocations', 'insert_quarantine']);

    const reader = probe(dataDir, 'reader', grantsOf('tool_audit_reader'));
    expect(reader.grants).toEqual([`GRANT SELECT ON ${DB}.* TO default`]);
    expect(reader.did.panel_queries).toBeGreaterThanOrEqual(40);
    expect(reader.did.panel_rows).toBeGreaterThan(0);
    expectRefused(reader, [...DESTRUCTIVE, 'insert_invocations', 'insert_quarantine']);
  }, 600_000);
});
