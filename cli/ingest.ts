/**
 * `tool-audit ingest`: a Kafka ingest worker (one consumer group; run several for throughput).
 * Serves /healthz, /readyz and /metrics on PORT.
 */
import { buildApp } from '../api/app.ts';
import type { ReadinessReport } from '../api/routes/health.ts';
import { AppError } from '../platform/errors.ts';
import { MetricsRegistry } from '../platform/metrics.ts';
import { createKafka, ensureTopics } from '../platform/kafka/client.ts';
import { createWriter, kafkaTopics, pingKafka, startKafkaWorker } from './ingest-wiring.ts';
import { onShutdown, startRuntime } from './runtime.ts';

/** Starts the worker; resolves once it consumes. */
export async function ingest(): Promise<void> {
  const rt = await startRuntime('tool-audit-ingest');
  const { config, logger, clickhouse } = rt;
  if (!config.kafka.brokers) {
    throw new AppError('CONFIG_INVALID', 'tool-audit ingest needs KAFKA_BROKERS (host:port[,host:port…])', { retryable: false });
  }
  const metrics = new MetricsRegistry();
  const writer = createWriter(rt, metrics);
  // The key filter loads before consuming starts (it reads every stored key once).
  await writer.ready?.();
  const kafka = createKafka({ brokers: config.kafka.brokers, clientId: config.kafka.clientId, logger });
  await ensureTopics(kafka, kafkaTopics(config));
  const worker = await startKafkaWorker(rt, kafka, writer, metrics);
  const app = buildApp({
    readiness: async (): Promise<ReadinessReport> => {
      const checks = { clickhouse: await clickhouse.ping(), kafka: await pingKafka(kafka), ingest_worker: worker.health() };
      return { ready: Object.values(checks).every((c) => c.ok), checks };
    },
    metrics,
    apiKeys: config.apiKeys,
    maxBodyBytes: config.ingest.maxBodyBytes,
    logger,
  });
  await app.listen({ port: config.port, host: config.host });
  logger.info({ topic: config.kafka.topic, group: config.kafka.groupId, port: config.port }, 'tool-audit ingest consuming');
  onShutdown(logger, async () => {
    await worker.stop();
    await app.close();
    await clickhouse.close();
  });
}
