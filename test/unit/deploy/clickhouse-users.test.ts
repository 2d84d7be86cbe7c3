import { describe, expect, it } from 'vitest';
import { grants, runInitScript, statements, TEST_ENV } from './users-sql.ts';

const TABLE_FUNCTIONS = 'GRANT CREATE TEMPORARY TABLE ON *.* TO tool_audit_ingest';
const ANALYZER_TABLE_FUNCTIONS = 'GRANT CREATE TEMPORARY TABLE ON *.* TO tool_audit_analyzer';
const API_TABLE_FUNCTIONS = 'GRANT CREATE TEMPORARY TABLE ON *.* TO tool_audit_api';
const FORBIDDEN = /\b(ALTER|DELETE|TRUNCATE|DROP|ALL|CREATE|OPTIMIZE|SYSTEM|KILL|ACCESS MANAGEMENT|GRANT OPTION|UPDATE)\b/i;

describe('deploy/clickhouse/initdb/01-users.sh', () => {
  const run = runInitScript(TEST_ENV);

  it('feeds the admin client the users with the passwords from the environment', () => {
    expect(run.status, run.stderr).toBe(0);
    expect(run.args).toContain('client --host 127.0.0.1 --user tool_audit_admin --password admin-pw --multiquery');
    expect(run.sql).not.toContain('${');
    const creates = statements(run.sql).filter((s) => s.startsWith('CREATE USER'));
    expect(creates).toEqual([
      "CREATE USER IF NOT EXISTS tool_audit_ingest IDENTIFIED WITH sha256_password BY 'ingest-pw' DEFAULT DATABASE tool_audit",
      "CREATE USER IF NOT EXISTS tool_audit_analyzer IDENTIFIED WITH sha256_password BY 'analyzer-pw' DEFAULT DATABASE tool_audit",
      "CREATE USER IF NOT EXISTS tool_audit_api IDENTIFIED WITH sha256_password BY 'api-pw' DEFAULT DATABASE tool_audit",
      "CREATE USER IF NOT EXISTS tool_audit_reader IDENTIFIED WITH sha256_password BY 'reader-pw' DEFAULT DATABASE tool_audit",
    ]);
    expect(statements(run.sql).every((s) => /^(CREATE USER|GRANT) /.test(s))).toBe(true);
  });

  it('grants SELECT and INSERT only: no ALTER, DELETE, TRUNCATE, DROP (or anything wider) for anyone', () => {
    for (const g of grants(run.sql)) {
      // Table functions (format(), used by the ingest look-ups) need this grant; it reaches no table.
      if ([TABLE_FUNCTIONS, ANALYZER_TABLE_FUNCTIONS, API_TABLE_FUNCTIONS].includes(g.statement)) continue;
      expect(g.statement).not.toMatch(FORBIDDEN);
      expect(g.privileges.every((p) => p === 'SELECT' || p === 'INSERT'), g.statement).toBe(true);
      expect(g.on.startsWith('tool_audit.'), g.statement).toBe(true);
    }
  });

  it('lets the API read everything and insert only what its routes and its dedup indexer write', () => {
    const api = grants(run.sql).filter((g) => g.to === 'tool_audit_api');
    expect(api.filter((g) => g.privileges.includes('SELECT')).map((g) => g.on)).toEqual(['tool_audit.*']);
    // Manifests (PUT, MCP reports) with their claims, MCP definitions and the MCP findings, budgets
    // and their decisions, the dedup index; never the segments, which only ingest writes.
    expect(api.filter((g) => g.privileges.includes('INSERT')).map((g) => g.on.replace('tool_audit.', '')).sort()).toEqual(
      ['budget_claims', 'budget_decisions', 'budget_versions', 'cache_key_replays', 'cache_replay_checks', 'dedup_progress', 'dedup_repeats', 'manifest_claims', 'mcp_tool_definitions', 'tool_manifests', 'violations'],
    );
    expect(api.filter((g) => !g.privileges.every((p) => p === 'SELECT' || p === 'INSERT')).map((g) => g.statement)).toEqual([API_TABLE_FUNCTIONS]);
  });

  it('gives the reader SELECT only, on the tool-audit database', () => {
    expect(grants(run.sql).filter((g) => g.to === 'tool_audit_reader')).toEqual([
      { privileges: ['SELECT'], on: 'tool_audit.*', to: 'tool_audit_reader', statement: 'GRANT SELECT ON tool_audit.* TO tool_audit_reader' },
    ]);
  });

  it('lets ingest insert segments and quarantine and read their keys; the analyzer insert pairs, violations and progress', () => {
    const of = (user: string, priv: string) => grants(run.sql).filter((g) => g.to === user && g.privileges.includes(priv)).map((g) => g.on.replace('tool_audit.', '')).sort();
    // Hints from producers (optimization_hint packets), model turns and agent runs are stored by ingest like the segments.
    const segments = ['agent_runs', 'model_turns', 'output_contents', 'quarantine', 'quarantine_replays', 'tool_invocations', 'tool_outputs', 'tool_workflows', 'workflow_optimizations'];
    // The key log and writer registry of migration 012 are written and read; the key tables only read.
    const keyLog = ['ingest_key_log', 'ingest_writers'];
    expect(of('tool_audit_ingest', 'INSERT')).toEqual([...keyLog, ...segments].sort());
    // The window aggregates' views read their cutover for each block of calls inserted (migration 015).
    expect(of('tool_audit_ingest', 'SELECT')).toEqual([...keyLog, ...segments, 'call_keys', 'output_keys', 'quarantine_keys', 'window_aggregates_cutover'].sort());
    expect(grants(run.sql).filter((g) => g.to === 'tool_audit_ingest' && !g.privileges.every((p) => p === 'SELECT' || p === 'INSERT')).map((g) => g.statement)).toEqual([TABLE_FUNCTIONS]);
    expect(grants(run.sql).filter((g) => g.to === 'tool_audit_analyzer' && !g.privileges.every((p) => p === 'SELECT' || p === 'INSERT')).map((g) => g.statement)).toEqual([ANALYZER_TABLE_FUNCTIONS]);
    // The hints job reads and writes workflow_optimizations; the audit log builder its three tables.
    const log = ['audit_log_heads', 'audit_log_leaves', 'audit_log_nodes'];
    expect(of('tool_audit_analyzer', 'INSERT')).toEqual([...log, 'analyzer_progress', 'tool_workflows', 'violations', 'workflow_optimizations'].sort());
    expect(of('tool_audit_analyzer', 'SELECT')).toEqual([...log, 'agent_runs', 'analyzer_progress', 'budget_decisions', 'mcp_tool_definitions', 'model_turns', 'output_contents', 'quarantine', 'tool_invocations', 'tool_manifests', 'tool_outputs', 'tool_workflows', 'violations', 'workflow_optimizations'].sort());
  });

  it('refuses missing passwords and ones that would break out of the SQL string', () => {
    const { CLICKHOUSE_READER_PASSWORD: _omit, ...missing } = TEST_ENV;
    expect(runInitScript(missing).status).not.toBe(0);
    const quoted = runInitScript({ ...TEST_ENV, CLICKHOUSE_READER_PASSWORD: "x'; DROP TABLE y; --" });
    expect(quoted.status).not.toBe(0);
    expect(quoted.sql).toBe('');
  });
});
