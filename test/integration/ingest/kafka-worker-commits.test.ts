/**
 * The ingest worker commits offsets while later batches are already being written: an offset
 * must never move past a chunk that was not made durable, even when later chunks of the same
 * partition succeed, and the failed chunk must come back without new messages arriving.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../platform/errors.ts';
import type { RawPacket } from '../../../ingest/rows.ts';
import type { SegmentWriter } from '../../../ingest/segment-writer.ts';
import { count } from '../../helpers/clickhouse.ts';
import { workerFixture } from '../../helpers/ingest-worker.ts';
import { eventually, groupLag, produceAll } from '../../helpers/kafka.ts';
import { mixedStream } from '../../helpers/workload.ts';

describe('ingest worker offsets', () => {
  it('does not commit past a chunk whose write failed, and writes it again', async () => {
    const { kafka, names, ch, db, writer: real, worker: workerOf } = await workerFixture('commits');
    // A bug, not a ClickHouse fault: the chunk holding offset 1000 fails once, without retry;
    // the chunks after it are written fine.
    let failed = 0;
    const writer: SegmentWriter = {
      write(batch: RawPacket[]) {
        if (failed === 0 && batch.some((p) => p.source.kind === 'kafka' && p.source.offset === '1000')) {
          failed++;
          return Promise.reject(new AppError('INTERNAL', 'simulated failure of one chunk', { retryable: false }));
        }
        return real.write(batch);
      },
    };
    const msgs = mixedStream(3000, { invalidEvery: 1_000_000, outputEvery: 1_000_000 });
    await produceAll(kafka, names.topic, msgs, 500);
    const worker = workerOf(writer);
    const admin = kafka.admin();
    await admin.connect();
    await worker.start();
    // No new messages arrive: the failed chunk must come back by itself.
    await eventually(async () => (await groupLag(admin, names.groupId, names.topic)) === 0, 90_000, 'the group to catch up');
    await worker.stop();
    await admin.disconnect();
    expect(failed).toBe(1);
    expect(await count(ch, db, 'tool_invocations')).toBe(3000);
  }, 120_000);
});

describe('a chunk that can never be written', () => {
  it('is parked in the DLQ after INGEST_CHUNK_MAX_ATTEMPTS failures, and the partition moves on', async () => {
    const { kafka, names, ch, db, metrics, writer: real, worker: workerOf } = await workerFixture('park');
    // ClickHouse refusing for good (as a missing grant does): the chunk holding offset 1000, every time.
    let failures = 0;
    const writer: SegmentWriter = {
      write(batch: RawPacket[]) {
        if (batch.some((p) => p.source.kind === 'kafka' && p.source.offset === '1000')) {
          failures++;
          return Promise.reject(new AppError('CLICKHOUSE_QUERY_FAILED', 'Code: 497. Not enough privileges (simulated)', { retryable: false }));
        }
        return real.write(batch);
      },
    };
    const msgs = mixedStream(3000, { invalidEvery: 1_000_000, outputEvery: 1_000_000 });
    await produceAll(kafka, names.topic, msgs, 500);
    const worker = workerOf(writer, { chunkMaxAttempts: 3 });
    const admin = kafka.admin();
    await admin.connect();
    await worker.start();
    await eventually(async () => (await groupLag(admin, names.groupId, names.topic)) === 0, 90_000, 'the group to move past the chunk');
    const health = worker.health();
    await worker.stop();
    await admin.disconnect();
    expect(failures).toBe(3);
    // Every packet is somewhere: written, or (the parked chunk's) in the DLQ byte for byte, with the reason.
    const consumer = kafka.consumer({ groupId: `${names.groupId}-read-dlq` });
    await consumer.connect();
    await consumer.subscribe({ topic: names.dlqTopic, fromBeginning: true });
    const parked: Array<{ value: string; headers: Record<string, string> }> = [];
    await consumer.run({ eachMessage: async ({ message }) => void parked.push({ value: message.value?.toString() ?? '', headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])) }) });
    await eventually(async () => parked.length >= 1, 30_000, 'the DLQ');
    await new Promise((r) => setTimeout(r, 1000));
    await consumer.disconnect();
    const chunkSize = parked.length;
    expect(chunkSize).toBeGreaterThan(0);
    expect(chunkSize).toBeLessThanOrEqual(500);
    const offsets = parked.map((m) => Number(m.headers['x-source']?.split('@')[1]));
    expect(offsets).toContain(1000);
    expect(parked.every((m) => m.headers['x-reason'] === 'unwritable' && m.headers['x-error']?.includes('Not enough privileges'))).toBe(true);
    for (const m of parked) expect(m.value).toBe(msgs[Number(m.headers['x-source']?.split('@')[1])]?.value);
    expect(await count(ch, db, 'tool_invocations')).toBe(3000 - chunkSize);
    expect(health.ok).toBe(true);
    expect(health.detail).toContain('1 chunk(s) parked in the DLQ');
    expect(metrics.render()).toMatch(/tool_audit_ingest_chunks_parked_total 1\b/);
  }, 150_000);
});
