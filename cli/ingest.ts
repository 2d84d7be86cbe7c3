/**
 * `tool-audit ingest`: a Kafka ingest worker (one consumer group; run several for throughput).
 * Serves /healthz, /readyz and /metrics on PORT.
 */
import { buildApp } from '../api/app.ts';
import type { ReadinessReport } from '../api/routes/health.ts';
import { AppError } from '../platform/errors.ts';
import { createKafka, ensureTopics } from '../platform/kafka/client.ts';
import { createWriter, kafkaTopics, pingKafka, startKafkaWorker } from './ingest-wiring.ts';
import { onShutdown, startRuntime } from './runtime.ts';
import { startupSteps } from './startup-steps.ts';
import type { IngestWorker } from '../ingest/kafka-worker-config.ts';

/** Starts the worker; resolves once it listens (it consumes once its key filter is loaded). */
export async function ingest(): Promise<void> {
  const rt = await startRuntime('tool-audit-ingest');
  const { config, logger, clickhouse } = rt;
  if (!config.kafka.brokers) {
    throw new AppError('CONFIG_INVALID', 'tool-audit ingest needs KAFKA_BROKERS (host:port[,host:port…])', { retryable: false });
  }
  const { metrics } = rt;
  const steps = startupSteps(logger);
  const writer = createWriter(rt, metrics);
  const kafka = createKafka({ brokers: config.kafka.brokers, clientId: config.kafka.clientId, logger });
  let worker: IngestWorker | undefined;
  const app = buildApp({
    readiness: async (): Promise<ReadinessReport> => {
      const checks: ReadinessReport['checks'] = { clickhouse: await clickhouse.ping(), ...steps.checks(), kafka: await pingKafka(kafka) };
      if (worker) checks.ingest_worker = worker.health();
      return { ready: Object.values(checks).every((c) => c.ok), checks };
    },
    metrics,
    apiKeys: config.apiKeys,
    edgeLimits: config.edgeLimits,
    maxBodyBytes: config.ingest.maxBodyBytes,
    logger,
  });
  await app.listen({ port: config.port, host: config.host });
  onShutdown(logger, async () => {
    await worker?.stop();
    await app.close();
    await writer.close?.();
    await clickhouse.close();
  });
  // The key filter loads (a snapshot and the rows since, or every stored key) while consuming
  // starts: until it is loaded every key of a round is looked up exactly (key-index.ts).
  void steps.run('key_filter', () => writer.ready?.() ?? Promise.resolve());
  await steps.run('kafka', async () => {
    await ensureTopics(kafka, kafkaTopics(config));
    worker = await startKafkaWorker(rt, kafka, writer, metrics);
  });
  logger.info({ topic: config.kafka.topic, group: config.kafka.groupId, port: config.port }, 'tool-audit ingest consuming');
}
