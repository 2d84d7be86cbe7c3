/**
 * Quarantine keeps the exact bytes of Kafka records: a value that is not UTF-8 is
 * stored as its base64 (never as U+FFFD text), a null value is told apart from an empty one.
 * Then a replay in Kafka mode: through the Kafka edge to the broker and the real worker, which
 * records the outcome without quarantining the packet again. Oracles: the bytes this test sent.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaEdge } from '../../../ingest/kafka-edge.ts';
import { createIngestWorker } from '../../../ingest/kafka-worker.ts';
import type { IngestWorker } from '../../../ingest/kafka-worker-config.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import type { QuarantineList, QuarantineRecord, ReplayAnswer } from '../../../queries/quarantine-schemas.ts';
import { count, freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { createTopics, eventually, ingestUntil, testKafka, uniqueNames } from '../../helpers/kafka.ts';
import { toolCall } from '../../helpers/packets.ts';
import { client, quarantineApp } from '../../helpers/quarantine-app.ts';

const kafka = testKafka();
const producer = kafka.producer({ idempotent: false });
const workers: IngestWorker[] = [];
beforeAll(async () => producer.connect());
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await producer.disconnect();
});

describe('Kafka records in quarantine', () => {
  it('stores invalid UTF-8 byte for byte (base64), a null value as none, an empty value as empty text; a replay in Kafka mode is recorded, not quarantined again', async () => {
    const names = uniqueNames('qbytes');
    await createTopics(kafka, [
      { topic: names.topic, partitions: 1 },
      { topic: names.dlqTopic, partitions: 1 },
    ]);
    const { ch, db, door } = await freshDatabase('qbytes');
    const metrics = new MetricsRegistry();
    const writer = createSegmentWriter({ clickhouse: door, maxPacketBytes: 64 * 1024, dedupCacheEntries: 100, metrics, logger: silentLogger(), decodeThreads: 1 });
    const worker = createIngestWorker({ kafka: testKafka('qbytes-worker'), writer, logger: silentLogger(), metrics, config: { ...names, batchMaxPackets: 500, sinkRetryMaxMs: 500, sinkUnhealthyAfterMs: 60_000 } });
    await worker.start();
    workers.push(worker);

    // A valid packet but for one byte: "caf\xE9" in result_summary (Latin-1 é).
    const call = toolCall({ result_summary: { text: 'cafe' } }, `task-${randomUUID()}`);
    const text = JSON.stringify(call);
    // Found by its key: the random ids and hashes are hex, where "cafe" can occur too.
    const at = text.indexOf('"text":"cafe"') + '"text":"caf'.length;
    const invalid = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xe9]), Buffer.from(text.slice(at + 1))]);
    const lone = Buffer.from([0xff, 0xfe, 0x00, 0x7b]);
    const sent: Array<Buffer | null> = [invalid, null, Buffer.alloc(0), lone];
    await producer.send({ topic: names.topic, acks: -1, messages: sent.map((value) => ({ key: 'k', value })) });
    await eventually(async () => (await count(ch, db, 'quarantine')) === 4, 60_000, 'four quarantine rows');

    const stored = await rows<{ offset: string; raw: string; raw_encoding: string; reason_code: string }>(
      ch,
      'SELECT toString(offset) AS offset, raw, toString(raw_encoding) AS raw_encoding, toString(reason_code) AS reason_code FROM {db:Identifier}.quarantine ORDER BY offset',
      { db },
    );
    expect(stored.map((r) => [r.raw_encoding, r.reason_code])).toEqual([
      ['base64', 'invalid_utf8'],
      ['none', 'malformed_json'],
      ['utf8', 'malformed_json'],
      ['base64', 'invalid_utf8'],
    ]);
    expect(Buffer.from(stored[0]?.raw ?? '', 'base64').equals(invalid)).toBe(true);
    expect(stored[1]?.raw).toBe('');
    expect(stored[2]?.raw).toBe('');
    expect(Buffer.from(stored[3]?.raw ?? '', 'base64').equals(lone)).toBe(true);
    expect(await count(ch, db, 'tool_invocations', `call_id = '${call.call_id}'`)).toBe(0);

    // The API answers the same bytes, with the encoding stated.
    const edge = kafka.producer({ idempotent: false });
    await edge.connect();
    const app = quarantineApp(door, createKafkaEdge({ producer: edge, topic: names.topic, maxPacketBytes: 64 * 1024 }), 'kafka');
    const api = client(app);
    try {
      const listed = (await api.get(`/v1/quarantine?source=kafka:${names.topic}/0`)).json<QuarantineList>();
      expect(listed.records.map((r) => [r.quarantine_id, r.raw_encoding, r.raw])).toEqual(
        [...stored].reverse().map((r) => [`kafka:${names.topic}/0@${r.offset}`, r.raw_encoding, r.raw]),
      );
      expect(listed.counts).toEqual({ invalid_utf8: 2, malformed_json: 2 });

      // Replay in Kafka mode: the stored bytes (still not UTF-8) and the producer's fix.
      const id = `kafka:${names.topic}/0@${stored[0]?.offset}`;
      const still = (await api.replay({ ids: [id] })).json<ReplayAnswer>();
      expect(still).toMatchObject({ mode: 'kafka', rejected: 1, results: [{ status: 'rejected', reason: { code: 'invalid_utf8' } }] });
      const fixed = (await api.replay({ ids: [id], packets: [text.replace('"text":"cafe"', '"text":"café"')] })).json<ReplayAnswer>();
      expect(fixed).toMatchObject({ mode: 'kafka', accepted: 1, results: [{ status: 'accepted', corrected: true, ids: [call.call_id] }] });
      // The worker judges them and records both replays; nothing is quarantined a second time.
      const replays = async () => (await api.get(`/v1/quarantine/${encodeURIComponent(id)}`)).json<{ record: QuarantineRecord }>().record.replays;
      await eventually(async () => (await replays()).length === 2, 60_000, 'two recorded replays');
      const recorded = await replays();
      expect(recorded.map((r) => [r.replay_id, r.outcome, r.reason?.code ?? null, r.corrected])).toEqual([
        [still.replay_id, 'rejected', 'invalid_utf8', false],
        [fixed.replay_id, 'accepted', null, true],
      ]);
      expect(recorded.every((r) => r.source.startsWith(`kafka:${names.topic}/0@`))).toBe(true);
      expect(await count(ch, db, 'quarantine')).toBe(4);
      const [row] = await rows<{ s: string }>(ch, 'SELECT result_summary AS s FROM {db:Identifier}.tool_invocations WHERE call_id = {c:UUID}', { db, c: call.call_id });
      expect(JSON.parse(row?.s ?? 'null')).toEqual({ text: 'café' });
      // The DLQ got the poison records' own bytes, once; the replays added nothing to it.
      const dlq = await kafka.admin();
      await dlq.connect();
      const offsets = await dlq.fetchTopicOffsets(names.dlqTopic);
      await dlq.disconnect();
      expect(offsets.reduce((n, p) => n + Number(p.high), 0)).toBe(4);
    } finally {
      await app.close();
      await edge.disconnect();
    }
  }, 120_000);

  it('with redaction on, a record that is not UTF-8 but holds a secret is kept as redacted text, never as its bytes; one without keeps its bytes', async () => {
    const names = uniqueNames('qbytesred');
    await createTopics(kafka, [
      { topic: names.topic, partitions: 1 },
      { topic: names.dlqTopic, partitions: 1 },
    ]);
    const { ch, db, door } = await freshDatabase('qbytesred');
    const metrics = new MetricsRegistry();
    const writer = createSegmentWriter({ clickhouse: door, maxPacketBytes: 64 * 1024, dedupCacheEntries: 100, metrics, logger: silentLogger(), decodeThreads: 1, redaction: { key: 'qbytes-redaction-key-0123456789' } });

    const secret = 'Tr0ub4dor-3-horse-battery';
    const text = JSON.stringify(toolCall({ args: { db: { user: 'app', password: secret } }, result_summary: { text: 'cafe' } }, `task-${randomUUID()}`));
    const at = text.indexOf('"text":"cafe"') + '"text":"caf'.length;
    const withSecret = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xe9]), Buffer.from(text.slice(at + 1))]);
    const plain = Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x7d]);
    await producer.send({ topic: names.topic, acks: -1, messages: [withSecret, plain].map((value) => ({ key: 'k', value })) });
    await ingestUntil({ names, writer, clientId: 'qbytesred-worker', metrics }, async () => (await count(ch, db, 'quarantine')) === 2, 'two quarantine rows');

    const stored = await rows<{ raw: string; raw_encoding: string; reason_code: string; reason: string }>(
      ch,
      'SELECT raw, toString(raw_encoding) AS raw_encoding, toString(reason_code) AS reason_code, reason FROM {db:Identifier}.quarantine ORDER BY offset',
      { db },
    );
    expect(stored.map((r) => [r.raw_encoding, r.reason_code])).toEqual([
      ['utf8', 'invalid_utf8'],
      ['base64', 'invalid_utf8'],
    ]);
    // Neither as text nor as its base64 is the secret stored.
    const all = JSON.stringify(await rows(ch, 'SELECT * FROM {db:Identifier}.quarantine', { db }));
    expect(all).not.toContain(secret);
    expect(stored.map((r) => (r.raw_encoding === 'base64' ? Buffer.from(r.raw, 'base64').toString('latin1') : r.raw)).join('\n')).not.toContain(secret);
    expect(Buffer.from(stored[1]!.raw, 'base64').equals(plain)).toBe(true);
    expect(stored[0]!.raw).toContain('[redacted:');
    expect(stored[0]!.raw).toContain('caf\ufffd');
    expect(stored[0]!.reason).toContain('its secrets redacted');
  });
});

