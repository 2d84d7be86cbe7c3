/**
 * The real Kafka broker of the test run (KAFKA_BROKERS, exported by scripts/test.sh after it
 * starts the broker), unique topic names per test, and fast bulk production.
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { createIngestWorker } from '../../ingest/kafka-worker.ts';
import type { IngestWorkerDeps } from '../../ingest/kafka-worker-config.ts';
import { ensureTopics } from '../../platform/kafka/client.ts';
import { silentLogger } from '../../platform/logger.ts';
import { MetricsRegistry } from '../../platform/metrics.ts';

/** Brokers of the test run; fails clearly when none is configured. */
export function brokers(): string[] {
  const b = process.env.KAFKA_BROKERS;
  if (!b) throw new Error('KAFKA_BROKERS is not set: run the tests through `npm test` (which starts Kafka) or `npm run services:start`');
  return b.split(',');
}

/** A kafkajs client for tests. */
export function testKafka(clientId = 'tool-audit-test'): Kafka {
  return new Kafka({ clientId, brokers: brokers(), logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 200 } });
}

/** A unique topic name (and matching dlq and group names). */
export function uniqueNames(prefix: string) {
  const id = `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  return { topic: `ta.${id}`, dlqTopic: `ta.${id}.dlq`, groupId: `g-${id}` };
}

/** Creates topics. */
export async function createTopics(kafka: Kafka, topics: Array<{ topic: string; partitions: number }>): Promise<void> {
  // As serve does: a topic just created may be unknown to the next metadata request for a moment.
  await ensureTopics(kafka, topics);
}

/** Produces values (keyed) in batches with acks from all in-sync replicas. */
export async function produceAll(kafka: Kafka, topic: string, messages: Array<{ key: string; value: string }>, batch = 2000): Promise<void> {
  const producer = kafka.producer({ idempotent: false });
  await producer.connect();
  for (let i = 0; i < messages.length; i += batch) {
    await producer.send({ topic, acks: -1, messages: messages.slice(i, i + batch) });
  }
  await producer.disconnect();
}

/** Messages the group has not yet committed on topic (sum over partitions). */
export async function groupLag(admin: Admin, groupId: string, topic: string): Promise<number> {
  const ends = await admin.fetchTopicOffsets(topic);
  const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
  let lag = 0;
  for (const p of ends) {
    const c = committed?.partitions.find((x) => x.partition === p.partition);
    const at = c && Number(c.offset) >= 0 ? Number(c.offset) : 0;
    lag += Number(p.high) - at;
  }
  return lag;
}

/** Polls until cond() is true or the deadline passes. */
export async function eventually(cond: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Offsets the group has committed on topic (sum over partitions). */
export async function committedTotal(admin: Admin, groupId: string, topic: string): Promise<number> {
  const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
  return (committed?.partitions ?? []).reduce((n, p) => n + Math.max(0, Number(p.offset)), 0);
}

/**
 * Every record of a topic from its beginning, values as text with their headers: those present
 * once the topic holds at least `atLeast` (default: what it holds now), waited for up to `ms`.
 */
export async function readTopic(topic: string, o: { atLeast?: number; ms?: number } = {}): Promise<Array<{ value: string; headers: Record<string, string> }>> {
  const kafka = testKafka('topic-reader');
  const admin = kafka.admin();
  await admin.connect();
  const held = async () => (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
  const end = Date.now() + (o.ms ?? 20_000);
  let total = await held();
  while (total < (o.atLeast ?? 0) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 200));
    total = await held();
  }
  await admin.disconnect();
  const out: Array<{ value: string; headers: Record<string, string> }> = [];
  if (total === 0) return out;
  const consumer = kafka.consumer({ groupId: `reader-${randomBytes(6).toString('hex')}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v ?? '')]));
        out.push({ value: message.value?.toString('utf8') ?? '', headers });
        if (out.length >= total) resolve();
      },
    });
  });
  await consumer.disconnect();
  return out;
}

/**
 * Runs an ingest worker (the one `tool-audit ingest` runs) on the topics of `names` with `writer`
 * until `done` holds, then stops it, whatever happened.
 */
export async function ingestUntil(o: { names: ReturnType<typeof uniqueNames>; writer: IngestWorkerDeps['writer']; clientId: string; metrics?: MetricsRegistry }, done: () => Promise<boolean>, what: string): Promise<void> {
  const worker = createIngestWorker({
    kafka: testKafka(o.clientId),
    writer: o.writer,
    logger: silentLogger(),
    metrics: o.metrics ?? new MetricsRegistry(),
    config: { ...o.names, batchMaxPackets: 500, sinkRetryMaxMs: 500, sinkUnhealthyAfterMs: 60_000 },
  });
  await worker.start();
  try {
    await eventually(done, 60_000, what);
  } finally {
    await worker.stop();
  }
}
