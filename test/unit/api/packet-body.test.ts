import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { splitPacketBody } from '../../../api/packet-body.ts';
import { assertSafeExposure } from '../../../api/auth.ts';
import { loadConfig } from '../../../platform/config.ts';
import { jsonSchemaFiles } from '../../../schemas/json-schema.ts';
import { splitStatements } from '../../../platform/clickhouse/migrate.ts';

describe('POST body splitting keeps each packet exact', () => {
  it('splits a JSON array into the raw text of its elements', () => {
    const r = splitPacketBody('[ {"a": 1.0, "s": "x]y,\\"z"} , {"b":[1,2]} ]');
    expect(r).toEqual({ ok: true, packets: ['{"a": 1.0, "s": "x]y,\\"z"}', '{"b":[1,2]}'] });
  });
  it('splits NDJSON into lines and keeps malformed lines as packets (judged later)', () => {
    expect(splitPacketBody('{"a":1}\n\n{"b":\n')).toEqual({ ok: true, packets: ['{"a":1}', '{"b":'] });
  });
  it.each(['', '[{"a":1}', '[1,]', 'hello', '[{"a":1}] trailing'])('rejects malformed body %j', (body) => {
    expect(splitPacketBody(body).ok).toBe(false);
  });
});

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
  it('parses API keys with scopes and brokers', () => {
    const r = loadConfig({ TOOL_AUDIT_API_KEYS: 'aaaaaaaaaaaaaaaa:ingest,read;bbbbbbbbbbbbbbbb:read', KAFKA_BROKERS: 'h1:9092, h2:9092' });
    if (!r.ok) throw new Error(r.error);
    expect(r.config.apiKeys).toEqual([
      { key: 'aaaaaaaaaaaaaaaa', scopes: ['ingest', 'read'] },
      { key: 'bbbbbbbbbbbbbbbb', scopes: ['read'] },
    ]);
    expect(r.config.kafka.brokers).toEqual(['h1:9092', 'h2:9092']);
  });
  it('refuses to serve beyond loopback without keys', () => {
    expect(() => assertSafeExposure('0.0.0.0', [])).toThrow(/TOOL_AUDIT_API_KEYS/);
    expect(() => assertSafeExposure('127.0.0.1', [])).not.toThrow();
    expect(() => assertSafeExposure('0.0.0.0', [{ key: 'k'.repeat(16), scopes: ['read'] }])).not.toThrow();
  });
});

describe('checked-in artifacts', () => {
  it('JSON Schema files are up to date (run npm run schemas)', () => {
    for (const [file, text] of Object.entries(jsonSchemaFiles())) {
      expect(readFileSync(new URL(`../../../schemas/json/${file}`, import.meta.url), 'utf8'), file).toBe(text);
    }
  });
  it('migration files split into statements', () => {
    const sql = readFileSync(new URL('../../../platform/clickhouse/migrations/001_segments.sql', import.meta.url), 'utf8');
    const st = splitStatements(sql);
    expect(st.filter((s) => s.startsWith('CREATE TABLE'))).toHaveLength(6);
  });
});
