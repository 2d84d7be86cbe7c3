/**
 * The emitter as an orchestrator author gets it: `npm pack` of emit/ (its prepack builds
 * dist/), installed from the tarball into an empty project, imported from plain JavaScript.
 * First without kafkajs — the types must check and HTTP delivery to a running server must
 * work — then with kafkajs, delivering to the real broker. Either way ClickHouse must hold
 * exactly the calls the script recorded, once each.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { createIngestWorker } from '../../../ingest/kafka-worker.ts';
import { createSegmentWriter, type SegmentWriter } from '../../../ingest/segment-writer.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { doorOf, freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { brokers, createTopics, eventually, groupLag, testKafka, uniqueNames } from '../../helpers/kafka.ts';
import { duKiB, emptyProject, fileBytes, installOffline, npmPack, runNode } from '../../helpers/npm-project.ts';

const root = new URL('../../../', import.meta.url).pathname;
const consumerDir = new URL('./consumer/', import.meta.url).pathname;
const INGEST_KEY = 'packed-ingest-key-0123456789';
// The budget for an orchestrator's install, kafkajs aside.
const MAX_INSTALLED_KIB = 10 * 1024;

let tmp: string;
let project: string;
let emitterTarball: string;
let ch: ClickHouseClient;
let db: string;
let writer: SegmentWriter;
const metrics = new MetricsRegistry();

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'tool-audit-packed-'));
  const packs = join(tmp, 'packs');
  project = join(tmp, 'project');
  mkdirSync(packs);
  mkdirSync(project);
  emitterTarball = npmPack(join(root, 'emit'), packs);
  emptyProject(project);
  installOffline(project, [emitterTarball]);
  copyFileSync(join(consumerDir, 'emit-calls.mjs'), join(project, 'emit-calls.mjs'));
  ({ ch, db } = await freshDatabase('packed'));
  writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 64 * 1024, dedupCacheEntries: 1000, metrics, logger: silentLogger() });
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

interface Run {
  callIds: string[];
  stats: { enqueued: number; delivered: number; rejected: number; dropped: number; buffered: number };
}

async function emitCalls(instanceId: string, calls: number, sink: object): Promise<Run> {
  const out = await runNode(project, 'emit-calls.mjs', [JSON.stringify({ instanceId, calls, sink })]);
  return JSON.parse(out.trim().split('\n').at(-1) as string) as Run;
}

/** What ClickHouse holds for an instance equals what the script recorded, each call once. */
async function expectExactlyOnce(instanceId: string, run: Run, calls: number): Promise<void> {
  // calls successes, each with an output_artifact, and one failure.
  expect(run.stats).toMatchObject({ enqueued: 2 * calls + 1, delivered: 2 * calls + 1, rejected: 0, dropped: 0, buffered: 0 });
  const stored = await rows<{ call_id: string }>(ch, 'SELECT call_id FROM {db:Identifier}.tool_invocations WHERE instance_id = {i:String}', { db, i: instanceId });
  expect(stored.map((r) => r.call_id).sort()).toEqual([...run.callIds].sort());
  expect(run.callIds).toHaveLength(calls + 1);
  const [o] = await rows<{ c: string }>(ch, 'SELECT count() AS c FROM {db:Identifier}.tool_outputs WHERE call_id IN {ids:Array(String)}', { db, ids: run.callIds });
  expect(Number(o?.c)).toBe(calls);
}

describe('the packed emitter, installed from its tarball', () => {
  it('installs small, without kafkajs, and its types check in a consumer project', () => {
    const installed = duKiB(join(project, 'node_modules'));
    console.log(`packed emitter: tarball ${(fileBytes(emitterTarball) / 1024).toFixed(1)} KiB; installed node_modules ${installed} KiB (kafkajs not installed)`);
    expect(installed).toBeLessThan(MAX_INSTALLED_KIB);
    expect(existsSync(join(project, 'node_modules/kafkajs'))).toBe(false);
    copyFileSync(join(consumerDir, 'check-types.ts.txt'), join(project, 'check-types.ts'));
    const compilerOptions = {
      target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true,
      // The consumer's own @types/node; borrowed from this repository so the test stays offline.
      types: ['node'], typeRoots: [join(root, 'node_modules/@types')],
    };
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['check-types.ts'] }));
    return runNode(project, join(root, 'node_modules/typescript/bin/tsc'), ['-p', 'tsconfig.json']);
  });

  it('delivers over HTTP to a running server exactly once, with no kafkajs installed', async () => {
    const app: FastifyInstance = buildApp({
      ingest: { submit: (p) => writer.write(p) },
      readiness: async () => ({ ready: true, checks: {} }),
      metrics,
      apiKeys: [{ key: INGEST_KEY, scopes: ['ingest'] }],
      maxBodyBytes: 4 * 1024 * 1024,
      logger: silentLogger(),
    });
    try {
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      const run = await emitCalls('packed-http', 25, { http: { url, apiKey: INGEST_KEY } });
      await expectExactlyOnce('packed-http', run, 25);
    } finally {
      await app.close();
    }
  });

  it('delivers to the real Kafka broker exactly once once kafkajs is installed', async () => {
    const kafkajsTarball = npmPack(join(root, 'node_modules/kafkajs'), join(tmp, 'packs'));
    installOffline(project, [emitterTarball, kafkajsTarball]);
    console.log(`packed emitter + kafkajs: installed node_modules ${duKiB(join(project, 'node_modules'))} KiB, ${duKiB(join(project, 'node_modules'), ['kafkajs'])} KiB without kafkajs`);
    const names = uniqueNames('packed');
    const kafka = testKafka('packed-admin');
    await createTopics(kafka, [
      { topic: names.topic, partitions: 2 },
      { topic: names.dlqTopic, partitions: 1 },
    ]);
    const run = await emitCalls('packed-kafka', 25, { kafka: { brokers: brokers(), topic: names.topic, clientId: 'packed-emitter' } });
    const worker = createIngestWorker({
      kafka: testKafka('packed-worker'),
      writer,
      logger: silentLogger(),
      metrics,
      config: { ...names, batchMaxPackets: 500, sinkRetryMaxMs: 500, sinkUnhealthyAfterMs: 60_000 },
    });
    await worker.start();
    const admin = kafka.admin();
    await admin.connect();
    try {
      await eventually(async () => (await groupLag(admin, names.groupId, names.topic)) === 0, 30_000, 'the ingest group to catch up');
    } finally {
      await worker.stop();
      await admin.disconnect();
    }
    await expectExactlyOnce('packed-kafka', run, 25);
  });
});
