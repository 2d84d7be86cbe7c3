/**
 * kafkajs client construction and topic set-up shared by the ingest worker, the HTTP edge
 * and the emitter.
 */
import type { Admin, ITopicConfig, Kafka, LogEntry } from 'kafkajs';
import type { MinimalLogger } from '../minimal-logger.ts';
import { kafkajs } from './kafkajs.ts';
import { AppError } from '../errors.ts';

/** Creates a kafkajs client that logs through the given logger (pino's, or the emitter user's). */
export function createKafka(opts: { brokers: string[]; clientId: string; logger: MinimalLogger }): Kafka {
  // Loaded here, not imported: the emitter reaches this module without needing kafkajs (see kafkajs.ts).
  const { Kafka: KafkaClient, logLevel } = kafkajs();
  const log = opts.logger;
  return new KafkaClient({
    clientId: opts.clientId,
    brokers: opts.brokers,
    connectionTimeout: 5000,
    requestTimeout: 30000,
    retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 5000 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        // The field a pino child would add; a plain logger has no child().
        const { message, ...rest } = entry;
        const fields = { component: 'kafkajs', ...rest };
        if (level <= logLevel.ERROR) log.error(fields, message);
        else if (level === logLevel.WARN) log.warn(fields, message);
        else log.debug(fields, message);
      },
  });
}

/** Creates the packet topic and its dead-letter topic when missing (idempotent). */
export async function ensureTopics(kafka: Kafka, topics: Array<{ topic: string; partitions: number }>): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing: ITopicConfig[] = topics
      .filter((t) => !existing.has(t.topic))
      .map((t) => ({ topic: t.topic, numPartitions: t.partitions, configEntries: [{ name: 'max.message.bytes', value: String(8 * 1024 * 1024) }] }));
    if (missing.length) {
      try {
        await admin.createTopics({ topics: missing, waitForLeaders: true });
      } catch (err) {
        // KRaft can answer the metadata request right after a create with UNKNOWN_TOPIC_OR_PARTITION,
        // and kafkajs's waitForLeaders retries only LEADER_NOT_AVAILABLE (seen in the tests, 2026-11-26).
        if ((err as { type?: string }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw err;
      }
      await leadersOf(admin, missing.map((t) => t.topic));
    }
  } finally {
    await admin.disconnect();
  }
}

/** Waits (≤ 30 s) until every partition of the topics has a leader. */
async function leadersOf(admin: Admin, topics: string[]): Promise<void> {
  const end = Date.now() + 30_000;
  for (;;) {
    try {
      const { topics: meta } = await admin.fetchTopicMetadata({ topics });
      if (meta.length === topics.length && meta.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return;
    } catch (err) {
      if (Date.now() > end) throw err;
    }
    if (Date.now() > end) throw new AppError('KAFKA_UNAVAILABLE', `no leader for every partition of ${topics.join(', ')} within 30 s`, { retryable: true });
    await new Promise((r) => setTimeout(r, 200));
  }
}
