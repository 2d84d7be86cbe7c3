/**
 * POST /v1/traces on a loopback port: the API app over a fresh embedded database with the real
 * segment writer behind it, one ingest key, and bodies mapped in a map thread as `serve` maps
 * them. For tests whose exporters are real SDKs.
 */
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../api/app.ts';
import { createTraceMapPool } from '../../ingest/otlp/map-pool.ts';
import { createSegmentWriter } from '../../ingest/segment-writer.ts';
import type { ClickHouseClient } from '../../platform/clickhouse/client.ts';
import { silentLogger } from '../../platform/logger.ts';
import { MetricsRegistry } from '../../platform/metrics.ts';
import { doorOf, freshDatabase } from './clickhouse.ts';

/** A running traces endpoint: its URL, its key, the database behind it, and how to stop it. */
export interface OtlpApp {
  ch: ClickHouseClient;
  db: string;
  url: string;
  key: string;
  close(): Promise<void>;
}

/** Starts the app on a free loopback port over a database named after `name`. */
export async function startOtlpApp(name: string, key = `${name}-ingest-key-0123456789`): Promise<OtlpApp> {
  const { ch, db } = await freshDatabase(name);
  const metrics = new MetricsRegistry();
  const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 64 * 1024, dedupCacheEntries: 0, metrics, logger: silentLogger() });
  const otlp = { taskIdAttribute: 'tool_audit.task_id', defaultOrchestrator: 'gateway', mcpCallSide: 'client' } as const;
  const otlpMapper = createTraceMapPool(1, otlp);
  const app = buildApp({ ingest: { submit: (p) => writer.write(p) }, readiness: async () => ({ ready: true, checks: {} }), metrics, apiKeys: [{ key, scopes: ['ingest'] }], maxBodyBytes: 4 * 1024 * 1024, logger: silentLogger(), otlp, otlpMapper });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const close = async () => {
    await app.close();
    await otlpMapper.close();
  };
  return { ch, db, key, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1/traces`, close };
}
