/**
 * kafkajs client construction and topic set-up shared by the ingest worker, the HTTP edge
 * and the emitter.
 */
import { Kafka, logLevel, type ITopicConfig, type LogEntry } from 'kafkajs';
import type { Logger } from '../logger.ts';

/** Creates a kafkajs client that logs through the process logger. */
export function createKafka(opts: { brokers: string[]; clientId: string; logger: Logger }): Kafka {
  const log = opts.logger.child({ component: 'kafkajs' });
  return new Kafka({
    clientId: opts.clientId,
    brokers: opts.brokers,
    connectionTimeout: 5000,
    requestTimeout: 30000,
    retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 5000 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, ...rest } = entry;
        if (level <= logLevel.ERROR) log.error(rest, message);
        else if (level === logLevel.WARN) log.warn(rest, message);
        else log.debug(rest, message);
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
    if (missing.length) await admin.createTopics({ topics: missing, waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}
