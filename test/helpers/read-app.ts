/**
 * The API over a test database as the route tests build it: the read routes with the tests'
 * defaults and no rate limit, and the manifest routes (PUT /v1/manifests, POST /v1/mcp/tools)
 * with a clock that moves a minute per apply when asked for.
 */
import type { FastifyInstance } from 'fastify';
import type { ExportLimits } from '../../api/routes/export.ts';
import { buildApp } from '../../api/app.ts';
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import type { ApiKey } from '../../platform/config.ts';
import { silentLogger } from '../../platform/logger.ts';
import { MetricsRegistry } from '../../platform/metrics.ts';
import { createReadQueries, type ReadQueries } from '../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../queries/sql.ts';

const DEFAULTS = { windowDays: 90, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 };
const NO_LIMIT = { perMinute: 0, burst: 1 };

/** What readApp builds on. */
export interface ReadAppOptions {
  door: ClickHouseDoor;
  db: string;
  keys: ApiKey[];
  /** Default: createReadQueries on the door. */
  queries?: ReadQueries;
  /** Serve the manifest routes; `clockFromMs`: applies take effect a minute apart from then, else the real clock. */
  manifests?: { clockFromMs?: number };
  /** Bounds of GET /v1/export; default the route's. */
  exportLimits?: ExportLimits;
}

/** buildApp with the read routes (and the manifest routes when asked). */
export function readApp(o: ReadAppOptions): FastifyInstance {
  let clock = o.manifests?.clockFromMs;
  return buildApp({
    readiness: async () => ({ ready: true, checks: {} }),
    metrics: new MetricsRegistry(),
    apiKeys: o.keys,
    maxBodyBytes: 1 << 20,
    logger: silentLogger(),
    read: { queries: o.queries ?? createReadQueries(o.door, o.db, DEFAULT_QUERY_CONTEXT), defaults: DEFAULTS, rateLimit: NO_LIMIT },
    export: { clickhouse: o.door, defaults: DEFAULTS, rateLimit: NO_LIMIT, ...(o.exportLimits ? { limits: o.exportLimits } : {}) },
    ...(o.manifests ? { manifests: { clickhouse: o.door, ...(clock === undefined ? {} : { now: () => (clock = (clock as number) + 60_000) }) } } : {}),
  });
}
