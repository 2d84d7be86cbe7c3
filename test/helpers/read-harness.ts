/* eslint-disable @typescript-eslint/no-explicit-any -- answers are JSON checked by zod schemas and toEqual, not by static types */
/**
 * Shared set-up of the read API integration tests: a fresh database, the generated workload
 * ingested through the real pipeline (segment writer), the auditor's violations inserted as the
 * auditor would, and the fastify app with the read API over it.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app.ts';
import type { ApiKey } from '../../platform/config.ts';
import type { ClickHouseClient } from '../../platform/clickhouse/client.ts';
import { createSegmentWriter } from '../../ingest/segment-writer.ts';
import { silentLogger } from '../../platform/logger.ts';
import { MetricsRegistry } from '../../platform/metrics.ts';
import { createReadQueries } from '../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../queries/sql.ts';
import { freshDatabase, doorOf } from './clickhouse.ts';
import { generateWorkload, type Workload } from './read-workload.ts';

export const READ_KEY = 'read-key-0123456789abcdef';
export const INGEST_KEY = 'ingest-key-0123456789abcd';
export const BOTH_KEY = 'both-key-0123456789abcdef';
export const KEYS: ApiKey[] = [
  { key: READ_KEY, scopes: ['read'] },
  { key: INGEST_KEY, scopes: ['ingest'] },
  { key: BOTH_KEY, scopes: ['ingest', 'read'] },
];

/** What a test file works with. */
export interface Harness {
  ch: ClickHouseClient;
  db: string;
  app: FastifyInstance;
  metrics: MetricsRegistry;
  workload: Workload;
  baseMs: number;
  /** GET with the read key; parsed JSON and status. */
  get(url: string, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  /** Follows next_cursor from `url`, concatenating the `field` arrays of every page. */
  all(url: string, field: string): Promise<{ items: any[]; pages: any[] }>;
}

/** Builds the harness; `rateLimit` defaults to off. */
export async function readHarness(opts: { seed?: number; rateLimit?: { perMinute: number; burst: number } } = {}): Promise<Harness> {
  const { ch, db } = await freshDatabase('rq');
  const metrics = new MetricsRegistry();
  const baseMs = Date.now() - 3 * 86_400_000;
  const workload = generateWorkload(opts.seed ?? 7, baseMs);
  const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 1000, metrics, logger: silentLogger() });
  const outcomes = await writer.write(workload.packets.map((p, index) => ({ raw: JSON.stringify(p), source: { kind: 'http', requestId: 'setup', index } })));
  const rejected = outcomes.filter((o) => o.status === 'rejected');
  if (rejected.length) throw new Error(`workload packets rejected: ${JSON.stringify(rejected.slice(0, 3))}`);
  await ch.insert({
    table: `${db}.violations`,
    values: workload.violations.map((v) => ({ ...v, detected_at: v.detected_at.replace('T', ' ').replace('Z', '') })),
    format: 'JSONEachRow',
  });
  const app = buildApp({
    readiness: async () => ({ ready: true, checks: {} }),
    metrics,
    apiKeys: KEYS,
    maxBodyBytes: 1 << 20,
    logger: silentLogger(),
    read: {
      queries: createReadQueries(doorOf(ch, db), db, { ...DEFAULT_QUERY_CONTEXT, metrics }),
      defaults: { windowDays: 90, expensiveThresholdUsd: 1.0, slowThresholdMs: 30_000 },
      rateLimit: opts.rateLimit ?? { perMinute: 0, burst: 1 },
    },
    export: { clickhouse: doorOf(ch, db), defaults: { windowDays: 90, expensiveThresholdUsd: 1.0, slowThresholdMs: 30_000 }, rateLimit: opts.rateLimit ?? { perMinute: 0, burst: 1 } },
  });
  const get: Harness['get'] = async (url, headers = { authorization: `Bearer ${READ_KEY}` }) => {
    const r = await app.inject({ method: 'GET', url, headers });
    let body: unknown;
    try {
      body = r.json();
    } catch {
      body = r.body;
    }
    return { status: r.statusCode, body, headers: r.headers as Record<string, unknown> };
  };
  const all: Harness['all'] = async (url, field) => {
    const items: any[] = [];
    const pages: any[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 500; i++) {
      const sep = url.includes('?') ? '&' : '?';
      const r = await get(cursor ? `${url}${sep}cursor=${encodeURIComponent(cursor)}` : url);
      if (r.status !== 200) throw new Error(`GET ${url} → ${r.status} ${JSON.stringify(r.body)}`);
      pages.push(r.body);
      items.push(...r.body[field]);
      cursor = r.body.next_cursor;
      if (!cursor) return { items, pages };
    }
    throw new Error('too many pages');
  };
  return { ch, db, app, metrics, workload, baseMs, get, all };
}

/** Rounds every number (recursively) so float sums compare across summation orders. */
export function approx<T>(v: T, digits = 6): T {
  if (typeof v === 'number') return (Number.isInteger(v) ? v : Number(v.toFixed(digits))) as T;
  if (Array.isArray(v)) return v.map((x) => approx(x, digits)) as T;
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, approx(x, digits)])) as T;
  return v;
}

/** ISO of epoch ms for query strings. */
export const iso = (ms: number) => new Date(ms).toISOString();
