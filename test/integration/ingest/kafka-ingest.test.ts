import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import { createIngestWorker } from '../../../ingest/kafka-worker.ts';
import type { IngestWorker, IngestWorkerConfig } from '../../../ingest/kafka-worker-config.ts';
import { createSegmentWriter, type SegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { count, freshDatabase, rows, doorOf } from '../../helpers/clickhouse.ts';
import { createTopics, eventually, groupLag, produceAll, testKafka, uniqueNames } from '../../helpers/kafka.ts';
import { mixedStream, type GenMessage } from '../../helpers/workload.ts';
import { toolCall } from '../../helpers/packets.ts';
import { createAuditEmitter } from '../../../emit/index.ts';
import { createDependencyAnalyzer } from '../../../analyzers/dependency-runner.ts';
import { buildApp } from '../../../api/app.ts';
import { createKafkaEdge } from '../../../ingest/kafka-edge.ts';

const kafka = testKafka();
const admin = kafka.admin();
beforeAll(async () => admin.connect());
afterAll(async () => admin.disconnect());

async function setup(prefix: string, partitions = 4, maxPacketBytes = 64 * 1024) {
  const names = uniqueNames(prefix);
  await createTopics(kafka, [
    { topic: names.topic, partitions },
    { topic: names.dlqTopic, partitions: 1 },
  ]);
  const { ch, db } = await freshDatabase(prefix.replace(/-/g, '_'));
  const metrics = new MetricsRegistry();
  const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes, dedupCacheEntries: 10_000, metrics, logger: silentLogger() });
  const workers: IngestWorker[] = [];
  const start = async (over: Partial<IngestWorkerConfig> = {}, w: SegmentWriter = writer) => {
    const worker = createIngestWorker({
      kafka: testKafka(`worker-${workers.length}`),
      writer: w,
      logger: silentLogger(),
      metrics,
      config: { ...names, batchMaxPackets: 500, sinkRetryMaxMs: 500, sinkUnhealthyAfterMs: 60_000, ...over },
    });
    await worker.start();
    workers.push(worker);
    return worker;
  };
  return { names, ch, db, writer, metrics, start, workers };
}

async function expectOracle(ch: ClickHouseClient, db: string, msgs: GenMessage[]) {
  const want = (k: GenMessage['expect']) => msgs.filter((m) => m.expect === k).length;
  const [inv] = await rows<{ c: string; u: string }>(ch, 'SELECT count() AS c, uniqExact(call_id) AS u FROM {db:Identifier}.tool_invocations', { db });
  expect(Number(inv?.c)).toBe(want('invocation'));
  expect(inv?.u).toBe(inv?.c);
  expect(await count(ch, db, 'tool_outputs')).toBe(want('output'));
  expect(await count(ch, db, 'quarantine')).toBe(want('quarantine'));
  const [q] = await rows<{ u: string; c: string }>(ch, 'SELECT uniqExact(source_key) AS u, count() AS c FROM {db:Identifier}.quarantine', { db });
  expect(q?.u).toBe(q?.c);
}

describe('Kafka → ingest worker → ClickHouse', () => {
  it('ingests a mixed stream exactly: valid rows once, every invalid packet quarantined, poison in the DLQ', async () => {
    const s = await setup('e2e');
    const msgs = mixedStream(3000);
    await produceAll(kafka, s.names.topic, msgs);
    await s.start();
    await eventually(async () => (await groupLag(admin, s.names.groupId, s.names.topic)) === 0, 60_000, 'the group to catch up');
    await Promise.all(s.workers.map((w) => w.stop()));
    await expectOracle(s.ch, s.db, msgs);
    const dlq = await admin.fetchTopicOffsets(s.names.dlqTopic);
    // Poison (unparseable, schema-breaking, oversized) is copied to the DLQ; rule breaches are not.
    const poison = msgs.filter((m) => m.reason && m.reason !== 'I5_args_hash').length;
    expect(poison).toBeGreaterThan(0);
    expect(dlq.reduce((n, p) => n + Number(p.high), 0)).toBe(poison);
  });

  it('keeps the oracle while consumers join and leave the group mid-stream', async () => {
    const s = await setup('rebalance', 6);
    const msgs = mixedStream(12_000);
    const first = s.start();
    await produceAll(kafka, s.names.topic, msgs.slice(0, 4000));
    await first;
    const second = await s.start();
    await produceAll(kafka, s.names.topic, msgs.slice(4000, 8000));
    const third = await s.start();
    await (await first).stop();
    await produceAll(kafka, s.names.topic, msgs.slice(8000));
    await second.stop();
    await eventually(async () => (await groupLag(admin, s.names.groupId, s.names.topic)) === 0, 90_000, 'the group to catch up');
    await third.stop();
    await expectOracle(s.ch, s.db, msgs);
  }, 180_000);

  it('quarantines oversized packets and moves on', async () => {
    const s = await setup('poison', 2, 4096);
    const big = JSON.stringify(toolCall({ args: { blob: 'z'.repeat(8000) } }));
    const msgs: GenMessage[] = [...mixedStream(500, { invalidEvery: 5 }), { key: 'task-x', value: big, expect: 'quarantine', reason: 'oversized' }, ...mixedStream(500)];
    await produceAll(kafka, s.names.topic, msgs);
    await s.start();
    await eventually(async () => (await groupLag(admin, s.names.groupId, s.names.topic)) === 0, 60_000, 'the group to catch up');
    await s.workers[0]?.stop();
    await expectOracle(s.ch, s.db, msgs);
    const reasons = await rows<{ reason_code: string; c: string }>(s.ch, 'SELECT reason_code, count() AS c FROM {db:Identifier}.quarantine GROUP BY reason_code', { db: s.db });
    const expected: Record<string, number> = {};
    for (const m of msgs) if (m.reason) expected[m.reason] = (expected[m.reason] ?? 0) + 1;
    expect(Object.fromEntries(reasons.map((r) => [r.reason_code, Number(r.c)]))).toEqual(expected);
    expect(Object.keys(expected).sort()).toEqual(['I5_args_hash', 'malformed_json', 'oversized', 'schema']);
  });

  it('holds offsets while ClickHouse refuses writes, reports unhealthy, and recovers by itself', async () => {
    const s = await setup('outage', 2);
    const msgs = mixedStream(4000);
    await produceAll(kafka, s.names.topic, msgs.slice(0, 1000));
    const worker = await s.start({ sinkUnhealthyAfterMs: 1000 });
    await eventually(async () => (await groupLag(admin, s.names.groupId, s.names.topic)) === 0, 60_000, 'the first part');
    // A real fault from the real engine: the segment table disappears for a while.
    await s.ch.command({ query: 'DETACH TABLE {db:Identifier}.tool_invocations', query_params: { db: s.db } });
    await produceAll(kafka, s.names.topic, msgs.slice(1000));
    await eventually(async () => !worker.health().ok, 30_000, 'the worker to report the failing sink');
    const lagDuring = await groupLag(admin, s.names.groupId, s.names.topic);
    expect(lagDuring).toBeGreaterThan(0);
    await s.ch.command({ query: 'ATTACH TABLE {db:Identifier}.tool_invocations', query_params: { db: s.db } });
    await eventually(async () => (await groupLag(admin, s.names.groupId, s.names.topic)) === 0, 60_000, 'recovery');
    expect(worker.health().ok).toBe(true);
    await worker.stop();
    await expectOracle(s.ch, s.db, msgs);
    expect(s.metrics.value('tool_audit_ingest_write_retries_total')).toBeGreaterThan(0);
  }, 120_000);
});

describe('emitter → Kafka → ingest → ClickHouse', () => {
  it('records exactly one tool_call per invocation and one output per successful call with content', async () => {
    const s = await setup('emitter');
    const emitter = createAuditEmitter({ orchestrator: 'kernel', agentId: 'QA_Agent', instanceId: 'kernel-7', kafka: { kafka: testKafka('emitter'), topic: s.names.topic } });
    const outcomes: Record<string, number> = {};
    for (let i = 0; i < 200; i++) {
      const kind = ['ok', 'envelope', 'throw', 'timeout', 'object'][i % 5] as string;
      outcomes[kind] = (outcomes[kind] ?? 0) + 1;
      await emitter
        .invoke(
          'search_web',
          { query: `Zürich ${i}`, n: i },
          async (ctx) => {
            if (kind === 'envelope') return { status: 'error', error_category: 'rate_limit', message: 'slow down', retryable: true };
            if (kind === 'throw') throw new Error(`boom ${i}`);
            // Returns only once the emitter has given up on it: a sleep longer than the timeout could
            // still win when the event loop stalls (a full suite on 2 cores did it once).
            if (kind === 'timeout') await new Promise((r) => ctx.signal.addEventListener('abort', r));
            return kind === 'object' ? { rows: [i] } : `result ${i}`;
          },
          { taskId: `emit-task-${i % 10}`, timeoutMs: kind === 'timeout' ? 5 : 1000 },
        )
        .catch(() => undefined);
    }
    await emitter.close(10_000);
    expect(emitter.stats()).toMatchObject({ enqueued: 200 + (outcomes.ok ?? 0) + (outcomes.object ?? 0), dropped: 0 });
    await s.start();
    await eventually(async () => (await groupLag(admin, s.names.groupId, s.names.topic)) === 0, 60_000, 'the group to catch up');
    await s.workers[0]?.stop();
    const byStatus = await rows<{ status: string; c: string }>(s.ch, 'SELECT status, count() AS c FROM {db:Identifier}.tool_invocations GROUP BY status', { db: s.db });
    expect(Object.fromEntries(byStatus.map((r) => [r.status, Number(r.c)]))).toEqual({
      success: (outcomes.ok ?? 0) + (outcomes.object ?? 0),
      rate_limited: outcomes.envelope,
      error: outcomes.throw,
      timeout: outcomes.timeout,
    });
    expect(await count(s.ch, s.db, 'tool_outputs')).toBe((outcomes.ok ?? 0) + (outcomes.object ?? 0));
    expect(await count(s.ch, s.db, 'quarantine')).toBe(0);
    const [d] = await rows<{ c: string }>(s.ch, "SELECT count() AS c FROM {db:Identifier}.tool_invocations WHERE instance_id = 'kernel-7' AND agent_id = 'QA_Agent'", { db: s.db });
    expect(Number(d?.c)).toBe(200);
  }, 120_000);
});

describe('Kafka → ingest → dependency analyzer', () => {
  it('links exactly the brute-force pair set with out-of-order and repeated deliveries', async () => {
    const s = await setup('analyze', 4);
    const base = Date.UTC(2026, 10, 21, 9);
    const calls = Array.from({ length: 600 }, (_, i) => ({
      task: `an-task-${i % 30}`,
      p: toolCall({ tool_id: ['search_web', 'fetch_url', 'python_execute'][i % 3], created_at: new Date(base + ((i * 7919) % 240_000)).toISOString() }, `an-task-${i % 30}`),
    }));
    const deliveries = [...calls, ...calls.filter((_, i) => i % 4 === 0)].sort((a, b) => (a.p.call_id < b.p.call_id ? -1 : 1));
    await produceAll(kafka, s.names.topic, deliveries.map((c) => ({ key: c.task, value: JSON.stringify(c.p) })));
    await s.start();
    const analyzer = createDependencyAnalyzer({ clickhouse: doorOf(s.ch, s.db), windowMs: 60_000, overlapMs: 60_000, metrics: s.metrics, logger: silentLogger() });
    analyzer.start(100);
    await eventually(async () => (await groupLag(admin, s.names.groupId, s.names.topic)) === 0, 60_000, 'the group to catch up');
    await s.workers[0]?.stop();
    await analyzer.stop();
    await analyzer.runOnce();
    const expected = new Set<string>();
    for (const a of calls) for (const b of calls) {
      const d = Date.parse(b.p.invocation.created_at) - Date.parse(a.p.invocation.created_at);
      if (a.task === b.task && d > 0 && d < 60_000) expected.add(`${a.p.call_id}>${b.p.call_id}`);
    }
    const got = await rows<{ k: string }>(s.ch, "SELECT concat(toString(preceding_call_id), '>', toString(succeeding_call_id)) AS k FROM {db:Identifier}.tool_workflows", { db: s.db });
    expect(got.length).toBe(new Set(got.map((r) => r.k)).size);
    expect(new Set(got.map((r) => r.k))).toEqual(expected);
    expect(expected.size).toBeGreaterThan(1000);
  }, 120_000);
});

describe('POST /v1/packets through Kafka (serve with KAFKA_BROKERS)', () => {
  it('answers after Kafka acknowledged; the worker writes valid packets and quarantines the rest with the request id', async () => {
    const s = await setup('edge', 2, 4096);
    const producer = kafka.producer({ idempotent: false });
    await producer.connect();
    const app = buildApp({
      ingest: createKafkaEdge({ producer, topic: s.names.topic, maxPacketBytes: 4096 }),
      readiness: async () => ({ ready: true, checks: {} }),
      metrics: s.metrics,
      apiKeys: [],
      maxBodyBytes: 1 << 20,
      logger: silentLogger(),
    });
    const good = [toolCall(), toolCall()];
    const body = JSON.stringify([...good, toolCall({ error: 'not on success' }), toolCall({ args: { blob: 'q'.repeat(10_000) } })]);
    const res = await app.inject({ method: 'POST', url: '/v1/packets', payload: body, headers: { 'content-type': 'application/json' } });
    const answer = res.json() as { request_id: string; accepted: number; rejected: number; results: Array<{ reason?: { code: string } }> };
    expect(answer).toMatchObject({ accepted: 2, rejected: 2 });
    expect(answer.results.map((r) => r.reason?.code ?? 'ok')).toEqual(['ok', 'ok', 'I3_error_on_success', 'oversized']);
    await s.start();
    await eventually(async () => (await groupLag(admin, s.names.groupId, s.names.topic)) === 0, 60_000, 'the group to catch up');
    await s.workers[0]?.stop();
    await producer.disconnect();
    await app.close();
    expect(await count(s.ch, s.db, 'tool_invocations')).toBe(2);
    const q = await rows<{ reason_code: string; request_id: string }>(s.ch, 'SELECT reason_code, request_id FROM {db:Identifier}.quarantine ORDER BY reason_code', { db: s.db });
    expect(q).toEqual([
      { reason_code: 'I3_error_on_success', request_id: answer.request_id },
      { reason_code: 'oversized', request_id: answer.request_id },
    ]);
  }, 120_000);
});
