import { describe, expect, it } from 'vitest';
import { CONFIG_SECTIONS, CONFIG_VARIABLES, loadConfig } from '../../../platform/config.ts';
import { SHARED_VARIABLES } from '../../../platform/config/env-values.ts';

describe('config', () => {
  it('has the documented defaults', () => {
    const r = loadConfig({});
    if (!r.ok) throw new Error(r.error);
    expect(r.config.port).toBe(8080);
    expect(r.config.clickhouse.dataDir).toBe('./data');
    expect(r.config.clickhouse.database).toBe('tool_audit');
    expect(r.config.kafka.brokers).toBeUndefined();
    expect(r.config.retentionDays).toEqual({ invocations: 90, outputs: 30, workflows: 30, quarantine: 90 });
    expect(r.config.analysis).toMatchObject({ dependencyWindowMs: 60000, auditGraceMs: 300000, enabledInServe: true });
  });
  it('fails with every bad variable named', () => {
    const r = loadConfig({ PORT: 'eighty', CLICKHOUSE_DATABASE: 'x; DROP', TOOL_AUDIT_API_KEYS: 'short:read' });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toContain('PORT');
      expect(r.error).toContain('CLICKHOUSE_DATABASE');
      expect(r.error).toContain('TOOL_AUDIT_API_KEYS');
    }
  });
  it('declares a variable two sections read once, and names an offence in it once', () => {
    // TOOL_AUDIT_DATA_DIR and CLICKHOUSE_DATABASE feed the storage section and the state folders' defaults.
    const r = loadConfig({ CLICKHOUSE_DATABASE: 'x-y' });
    expect(!r.ok && r.error.split('\n').filter((l) => l.includes('CLICKHOUSE_DATABASE'))).toEqual(['  CLICKHOUSE_DATABASE: must be a plain identifier']);
    // Every variable more than one section reads is one of the shared declarations, the very same
    // schema in each: a second declaration of it could drift from the first.
    const readers = new Map<string, unknown[]>();
    for (const section of CONFIG_SECTIONS) for (const [name, schema] of Object.entries(section.in.shape)) readers.set(name, [...(readers.get(name) ?? []), schema]);
    const shared = [...readers].filter(([, schemas]) => schemas.length > 1);
    expect(shared.map(([name]) => name).sort()).toEqual(Object.keys(SHARED_VARIABLES).sort());
    for (const [name, schemas] of shared) for (const schema of schemas) expect(schema, name).toBe(SHARED_VARIABLES[name as keyof typeof SHARED_VARIABLES]);
    expect(CONFIG_VARIABLES).toEqual(expect.arrayContaining(['PORT', 'TOOL_AUDIT_DATA_DIR', 'KAFKA_BROKERS', 'AUDIT_LOG_DIR', 'OTLP_MAP_THREADS', 'WATCHDOG_TIMEOUT_MS']));
  });
  it('keeps the audit log beside the data directory, never in it, names the log after its database, and parses witnesses', () => {
    const d = loadConfig({ TOOL_AUDIT_DATA_DIR: '/var/lib/ta/data/', CLICKHOUSE_DATABASE: 'prod' });
    if (!d.ok) throw new Error(d.error);
    expect(d.config.auditLog).toMatchObject({ dir: '/var/lib/ta/data-audit-log', origin: 'tool-audit/prod', witnessUrls: [] });
    const w = loadConfig({ AUDIT_LOG_DIR: '/keys', AUDIT_LOG_ORIGIN: 'audit.example.com/prod', AUDIT_LOG_WITNESS_URLS: 'https://w1.example/add-checkpoint, http://w2:8080/keep' });
    if (!w.ok) throw new Error(w.error);
    expect(w.config.auditLog).toMatchObject({ dir: '/keys', origin: 'audit.example.com/prod', witnessUrls: ['https://w1.example/add-checkpoint', 'http://w2:8080/keep'] });
    const bad = loadConfig({ AUDIT_LOG_ORIGIN: 'a b', AUDIT_LOG_WITNESS_URLS: 'ftp://w/x' });
    expect(!bad.ok && bad.error).toContain('AUDIT_LOG_ORIGIN');
    expect(!bad.ok && bad.error).toContain('AUDIT_LOG_WITNESS_URLS');
  });
  it('takes a budget-check port of its own only when asked, and names a bad one', () => {
    const none = loadConfig({});
    expect(none.ok && none.config.budgets.checkPort).toBeUndefined();
    const any = loadConfig({ BUDGET_CHECK_PORT: '0' });
    expect(any.ok && any.config.budgets.checkPort).toBe(0);
    for (const v of ['eighty', '65536', '-1']) {
      const r = loadConfig({ BUDGET_CHECK_PORT: v });
      expect(!r.ok && r.error).toContain('BUDGET_CHECK_PORT');
    }
  });
  it('parses API keys with scopes and brokers', () => {
    const r = loadConfig({ TOOL_AUDIT_API_KEYS: 'aaaaaaaaaaaaaaaa:ingest,read;bbbbbbbbbbbbbbbb:read', KAFKA_BROKERS: 'h1:9092, h2:9092' });
    if (!r.ok) throw new Error(r.error);
    expect(r.config.apiKeys).toEqual([
      { key: 'aaaaaaaaaaaaaaaa', scopes: ['ingest', 'read'] },
      { key: 'bbbbbbbbbbbbbbbb', scopes: ['read'] },
    ]);
    expect(r.config.kafka.brokers).toEqual(['h1:9092', 'h2:9092']);
  });
  it('is in dev mode on the embedded engine, in production with a server, and refuses documented defaults only in production', () => {
    const laptop = loadConfig({ REDACTION_KEY: 'dev-redaction-key-change-me' });
    expect(laptop.ok && laptop.config.mode).toBe('dev');
    const server = { CLICKHOUSE_URL: 'http://clickhouse:8123', CLICKHOUSE_PASSWORD: 'change-me-api', REDACTION_KEY: 'dev-redaction-key-change-me', TOOL_AUDIT_API_KEYS: 'my-own-key-0123456789:read;dev-ingest-key-0001:ingest' };
    const refused = loadConfig(server);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.error.match(/^ {2}[A-Z_]+(?=: holds the documented default)/gm)).toEqual(['  TOOL_AUDIT_API_KEYS', '  REDACTION_KEY', '  CLICKHOUSE_PASSWORD']);
    expect(!refused.ok && refused.error).not.toContain('change-me-api');
    expect(loadConfig({ ...server, TOOL_AUDIT_MODE: 'dev' }).ok).toBe(true);
    expect(loadConfig({ ...server, CLICKHOUSE_PASSWORD: 's3cret-of-mine', REDACTION_KEY: 'a-redaction-key-of-mine', TOOL_AUDIT_API_KEYS: 'my-own-key-0123456789:read' }).ok).toBe(true);
    const dual = loadConfig({ ...server, CLICKHOUSE_PASSWORD: 's3cret-of-mine', REDACTION_KEY: 'a-redaction-key-of-mine', TOOL_AUDIT_API_KEYS: 'mine-key-0123456789:ingest,read' });
    expect(!dual.ok && dual.error).toMatch(/TOOL_AUDIT_API_KEYS: the key mine… carries both ingest and read/);
    expect(!dual.ok && dual.error).not.toContain('mine-key-0123456789');
    const bogus = loadConfig({ TOOL_AUDIT_MODE: 'prod' });
    expect(!bogus.ok && bogus.error).toContain('TOOL_AUDIT_MODE: must be dev or production');
  });

  it('knows the admin and metrics scopes and no other', () => {
    const r = loadConfig({ TOOL_AUDIT_API_KEYS: 'cccccccccccccccc:admin,read;dddddddddddddddd:metrics' });
    expect(r.ok && r.config.apiKeys).toEqual([{ key: 'cccccccccccccccc', scopes: ['admin', 'read'] }, { key: 'dddddddddddddddd', scopes: ['metrics'] }]);
    const bad = loadConfig({ TOOL_AUDIT_API_KEYS: 'cccccccccccccccc:root' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toContain('<ingest|read|admin|metrics>');
  });
  it('names a public HOST without keys beside every other offence when serving, before anything is opened', () => {
    const r = loadConfig({ PORT: 'abc', HOST: '0.0.0.0' }, { serving: true });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toContain('PORT');
      expect(r.error).toMatch(/HOST: 0\.0\.0\.0 is reachable beyond loopback/);
    }
    expect(loadConfig({ HOST: '0.0.0.0' }).ok).toBe(true);
    expect(loadConfig({ HOST: '0.0.0.0', TOOL_AUDIT_API_KEYS: `${'k'.repeat(16)}:read` }, { serving: true }).ok).toBe(true);
    expect(loadConfig({ HOST: '127.0.0.2' }, { serving: true }).ok).toBe(true);
  });
});
