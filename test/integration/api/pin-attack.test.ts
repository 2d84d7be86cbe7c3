/**
 * The lookup-table attack on deterministic placeholders, on embedded ClickHouse: send calls whose
 * password is every PIN 000 … 999, read back the placeholder each got, and look up a victim's
 * stored placeholder. Placeholders are deterministic by design (repeats stay repeats), so the
 * defence is that no key both ingests and reads: outside dev mode such a key is refused at start.
 * The oracle is the attack itself: with a key of both scopes (dev mode) it recovers the victim's
 * PIN and all 1,000 entries; with the ingest key alone every read route, the export and search
 * answer 403 and the table stays empty; with the read key alone nothing can be sent.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { READ_ROUTES } from '../../../api/read-route-table.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { loadConfig, type ApiKey } from '../../../platform/config.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { createReadQueries } from '../../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { doorOf, freshDatabase } from '../../helpers/clickhouse.ts';
import { toolCall } from '../../helpers/packets.ts';

const INGEST = 'pin-ingest-key-0123456789';
const READ = 'pin-read-key-0123456789ab';
const BOTH = 'pin-both-key-0123456789ab';
const KEYS: ApiKey[] = [
  { key: INGEST, scopes: ['ingest'] },
  { key: READ, scopes: ['read'] },
  { key: BOTH, scopes: ['ingest', 'read'] },
];
const VICTIM_PIN = '482';
const DEFAULTS = { windowDays: 90, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 };

let app: FastifyInstance;
let victimTask: string;
beforeAll(async () => {
  const { ch, db } = await freshDatabase('pin');
  const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 100, metrics: new MetricsRegistry(), logger: silentLogger(), redaction: { key: 'pin-attack-redaction-key-0123456789' } });
  app = buildApp({
    ingest: { submit: (p) => writer.write(p) },
    readiness: async () => ({ ready: true, checks: {} }),
    metrics: new MetricsRegistry(),
    apiKeys: KEYS,
    maxBodyBytes: 16 << 20,
    logger: silentLogger(),
    read: { queries: createReadQueries(doorOf(ch, db), db, DEFAULT_QUERY_CONTEXT), defaults: DEFAULTS, rateLimit: { perMinute: 0, burst: 1 } },
    export: { clickhouse: doorOf(ch, db), defaults: DEFAULTS, rateLimit: { perMinute: 0, burst: 1 } },
  });
  victimTask = `victim-${randomUUID()}`;
  const victim = toolCall({ tool_id: 'db_login', args: { user: 'ops', password: VICTIM_PIN }, created_at: new Date().toISOString() }, victimTask);
  expect((await post(INGEST, [victim])).statusCode).toBe(200);
});
afterAll(async () => app?.close());

const post = (key: string, packets: unknown[]) =>
  app.inject({ method: 'POST', url: '/v1/packets', payload: JSON.stringify(packets), headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
const get = (key: string, url: string) => app.inject({ url, headers: { authorization: `Bearer ${key}` } });

/** The attack with a sending key and a reading key: the placeholder → PIN table it builds, and the victim's PIN if found. */
async function attack(sendKey: string, readKey: string): Promise<{ sent: number; table: Map<string, string>; recovered: string | undefined; reads: number[] }> {
  const task = `attack-${randomUUID()}`;
  const pins = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
  const calls = pins.map((pin) => toolCall({ tool_id: 'db_login', args: { user: 'ops', password: pin }, created_at: new Date().toISOString() }, task));
  const sent = await post(sendKey, calls);
  const byCall = new Map(calls.map((c, i) => [c.call_id, pins[i] as string]));
  const table = new Map<string, string>();
  const reads: number[] = [];
  const seen = await get(readKey, `/v1/tasks/${task}?limit=1000`);
  reads.push(seen.statusCode);
  if (seen.statusCode === 200) {
    for (const inv of (seen.json() as { invocations: Array<{ call_id: string; args: { password: string } }> }).invocations) table.set(inv.args.password, byCall.get(inv.call_id) as string);
  }
  // Every other way out for the reading key: each read route, the export, search.
  for (const route of READ_ROUTES) reads.push((await get(readKey, route.url.replace(/:[a-z_]+/g, 'x'))).statusCode);
  reads.push((await get(readKey, '/v1/export?kind=calls&format=ndjson')).statusCode, (await get(readKey, '/v1/search?q=redacted')).statusCode);
  const victim = await get(readKey, `/v1/tasks/${victimTask}`);
  const stored = victim.statusCode === 200 ? (victim.json() as { invocations: Array<{ args: { password: string } }> }).invocations[0]?.args.password : undefined;
  return { sent: sent.statusCode, table, recovered: stored === undefined ? undefined : table.get(stored), reads };
}

describe('the PIN attack on placeholders', () => {
  it('recovers every PIN with a key that both ingests and reads — a key refused outside dev mode', async () => {
    const r = await attack(BOTH, BOTH);
    expect(r.table.size).toBe(1000);
    expect(r.recovered).toBe(VICTIM_PIN);
    const prod = loadConfig({ CLICKHOUSE_URL: 'http://clickhouse:8123', TOOL_AUDIT_API_KEYS: KEYS.map((k) => `${k.key}:${k.scopes.join(',')}`).join(';') });
    expect(prod.ok).toBe(false);
    expect(!prod.ok && prod.error.match(/the key \S+ carries both ingest and read/g)).toEqual(['the key pin-… carries both ingest and read']);
  });

  it('recovers nothing with the keys production allows: the ingest key reads nothing, the read key sends nothing', async () => {
    const withIngest = await attack(INGEST, INGEST);
    expect(withIngest.sent).toBe(200);
    expect(new Set(withIngest.reads)).toEqual(new Set([403]));
    expect([withIngest.table.size, withIngest.recovered]).toEqual([0, undefined]);
    const withRead = await attack(READ, READ);
    expect(withRead.sent).toBe(403);
    expect([withRead.table.size, withRead.recovered]).toEqual([0, undefined]);
  });
});
