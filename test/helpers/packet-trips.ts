/**
 * A packet kind's trips, as its tests take them: over HTTP, a fresh database with a real writer
 * behind POST /v1/packets and the read API; over Kafka, a good packet produced twice (a
 * redelivery) and a bad one to a fresh topic, a real ingest worker and writer until the kind's
 * table holds one row and the quarantine one record.
 */
import type { Kafka } from 'kafkajs';
import { createSegmentWriter } from '../../ingest/segment-writer.ts';
import { silentLogger } from '../../platform/logger.ts';
import { MetricsRegistry } from '../../platform/metrics.ts';
import { count, freshDatabase } from './clickhouse.ts';
import { createTopics, ingestUntil, produceAll, uniqueNames } from './kafka.ts';
import { client, quarantineApp } from './quarantine-app.ts';

function writerOf(door: Awaited<ReturnType<typeof freshDatabase>>['door']) {
  return createSegmentWriter({ clickhouse: door, maxPacketBytes: 64 * 1024, dedupCacheEntries: 1000, metrics: new MetricsRegistry(), logger: silentLogger() });
}

/** A fresh database, a writer on it behind the app's POST /v1/packets, and a client of the app (close `app` at the end). */
export async function packetApp(name: string) {
  const fresh = await freshDatabase(name);
  const writer = writerOf(fresh.door);
  const app = quarantineApp(fresh.door, { submit: (p) => writer.write(p) });
  return { ...fresh, app, c: client(app) };
}

/** Runs the trip; the database and the topic names, to check what was stored. */
export async function goodTwiceAndBad(kafka: Kafka, o: { name: string; key: string; good: object; bad: object; table: string }) {
  const names = uniqueNames(o.name);
  await createTopics(kafka, [{ topic: names.topic, partitions: 2 }, { topic: names.dlqTopic, partitions: 1 }]);
  const fresh = await freshDatabase(`${o.name}k`);
  const { ch, db, door } = fresh;
  await produceAll(kafka, names.topic, [
    { key: o.key, value: JSON.stringify(o.good) },
    { key: o.key, value: JSON.stringify(o.good) },
    { key: 'bad', value: JSON.stringify(o.bad) },
  ]);
  await ingestUntil({ names, writer: writerOf(door), clientId: `${o.name}-worker` }, async () => (await count(ch, db, 'quarantine')) === 1 && (await count(ch, db, o.table)) === 1, `the ${o.table} row and the rejection`);
  return { ...fresh, names };
}
