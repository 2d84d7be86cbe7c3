/**
 * An API process for quarantine tests: packets, the read API and the replay route over one
 * database and one {@link PacketIngest} (the segment writer, or the Kafka edge).
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app.ts';
import type { ReplayApiDeps } from '../../api/routes/quarantine-replay.ts';
import type { PacketIngest } from '../../ingest/ports.ts';
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { silentLogger } from '../../platform/logger.ts';
import { MetricsRegistry } from '../../platform/metrics.ts';
import { createReadQueries } from '../../queries/index.ts';
import { quarantineByIds, quarantineList } from '../../queries/quarantine.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../queries/sql.ts';

export const INGEST_KEY = 'ingest-key-0123456789';
export const READ_KEY = 'read-key-0123456789ab';
export const BOTH_KEY = 'both-key-0123456789ab';

/** The app; `mode` as the replay answer states it. */
export function quarantineApp(door: ClickHouseDoor, ingest: PacketIngest, mode: ReplayApiDeps['mode'] = 'direct'): FastifyInstance {
  const defaults = { windowDays: 90, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 };
  const db = door.database;
  return buildApp({
    ingest,
    read: { queries: createReadQueries(door, db, DEFAULT_QUERY_CONTEXT), defaults, rateLimit: { perMinute: 0, burst: 0 } },
    replay: {
      byIds: (ids) => quarantineByIds(door, db, ids, DEFAULT_QUERY_CONTEXT),
      list: (p) => quarantineList(door, db, p, DEFAULT_QUERY_CONTEXT),
      mode,
      defaults,
    },
    readiness: async () => ({ ready: true, checks: {} }),
    metrics: new MetricsRegistry(),
    apiKeys: [
      { key: INGEST_KEY, scopes: ['ingest'] },
      { key: READ_KEY, scopes: ['read'] },
      { key: BOTH_KEY, scopes: ['ingest', 'read'] },
    ],
    maxBodyBytes: 4 * 1024 * 1024,
    logger: silentLogger(),
  });
}

/** Request helpers with the right keys. */
export function client(app: FastifyInstance) {
  return {
    postPackets: (payload: string | Buffer, contentType = 'application/json') =>
      app.inject({ method: 'POST', url: '/v1/packets', payload, headers: { 'content-type': contentType, authorization: `Bearer ${INGEST_KEY}` } }),
    replay: (body: unknown, key = INGEST_KEY) =>
      app.inject({ method: 'POST', url: '/v1/quarantine/replay', payload: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } }),
    get: (url: string, key = READ_KEY) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } }),
  };
}
