/**
 * `tool-audit serve` (= npm start): the all-in-one process. HTTP API; packets go straight to
 * the segment writer (no Kafka configured) or through Kafka to an in-process ingest worker.
 */
import { buildApp } from '../api/app.ts';
import { assertSafeExposure } from '../api/auth.ts';
import { pingClickHouse } from '../clickhouse/health.ts';
import { createSegmentWriter } from '../ingest/segment-writer.ts';
import { MetricsRegistry } from '../metrics.ts';
import { onShutdown, startRuntime } from './runtime.ts';

/** Starts the server; resolves once it listens. */
export async function serve(): Promise<void> {
  const { config, logger, clickhouse } = await startRuntime('tool-audit-serve');
  assertSafeExposure(config.host, config.apiKeys);
  const metrics = new MetricsRegistry();
  const writer = createSegmentWriter({
    clickhouse,
    database: config.clickhouse.database,
    maxPacketBytes: config.ingest.maxPacketBytes,
    dedupCacheEntries: config.ingest.dedupCacheEntries,
    metrics,
    logger,
  });
  const app = buildApp({
    ingest: { submit: (packets) => writer.write(packets) },
    readiness: async () => {
      const ch = await pingClickHouse(clickhouse);
      return { ready: ch.ok, checks: { clickhouse: ch } };
    },
    metrics,
    apiKeys: config.apiKeys,
    maxBodyBytes: config.ingest.maxBodyBytes,
    logger,
  });
  await app.listen({ port: config.port, host: config.host });
  logger.info({ port: config.port, host: config.host, clickhouse: config.clickhouse.url ?? `embedded:${config.clickhouse.dataDir}` }, 'tool-audit serving');
  onShutdown(logger, async () => {
    // close() stops accepting, waits for in-flight requests (whose packets are then durable).
    await app.close();
    await clickhouse.close();
  });
}
