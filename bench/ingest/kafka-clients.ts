/**
 * `npm run bench:kafka-clients`: kafkajs (the pipeline's client) against @platformatic/kafka on
 * the real broker, in one run, rounds interleaved, each side in a process of its own
 * (bench/ingest/kafka-client-child.ts): main-thread busy time (event-loop utilization) and process CPU
 * per 100,000 packets to produce (idempotent, acks=all, 1,000 per send) and to consume (a fresh
 * group from the beginning, manual commits per batch), and any process warnings seen (kafkajs's
 * TimeoutNegativeWarning on Node ≥ 24).
 *
 *   npm run services:start && KAFKA_BROKERS=127.0.0.1:19092 npm run bench:kafka-clients [-- --packets 100000 --rounds 3 --json FILE]
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { median } from '../stats.ts';

const { values: v } = parseArgs({ options: { packets: { type: 'string' }, rounds: { type: 'string' }, json: { type: 'string' }, brokers: { type: 'string' } } });
const N = Number(v.packets ?? 100_000);
const ROUNDS = Number(v.rounds ?? 3);
const root = new URL('../../', import.meta.url).pathname;
const CLIENTS = ['kafkajs', 'platformatic'] as const;

interface Sample {
  client: string;
  op: string;
  wall_ms: number;
  main_thread_busy_ms: number;
  cpu_ms: number;
  warnings: number;
  first_warning: string | null;
}

function child(brokers: string, client: string, op: string, topic: string): Sample {
  const out = execFileSync(process.execPath, [join(root, 'node_modules/tsx/dist/cli.mjs'), join(root, 'bench/ingest/kafka-client-child.ts'), client, op, brokers, topic, String(N)], { encoding: 'utf8', timeout: 600_000 });
  return JSON.parse(out.trim().split('\n').at(-1) as string) as Sample;
}


async function main(brokers: string): Promise<void> {
  const admin = new Kafka({ clientId: 'bench-admin', brokers: brokers.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const samples: Sample[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate who goes first: a warm broker page cache favours the second.
    for (const client of r % 2 === 0 ? CLIENTS : [...CLIENTS].reverse()) {
      const topic = `bench-clients-${client}-${r}-${Date.now()}`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
      samples.push(child(brokers, client, 'produce', topic));
      samples.push(child(brokers, client, 'consume', topic));
      await admin.deleteTopics({ topics: [topic] });
    }
  }
  await admin.disconnect();
  const per100k = (x: number) => (x * 100_000) / N;
  const rows = CLIENTS.flatMap((client) =>
    ['produce', 'consume'].map((op) => {
      const s = samples.filter((x) => x.client === client && x.op === op);
      return { client, op, wall_ms: median(s.map((x) => x.wall_ms)), main_thread_ms_per_100k: per100k(median(s.map((x) => x.main_thread_busy_ms))), cpu_ms_per_100k: per100k(median(s.map((x) => x.cpu_ms))), warnings: Math.max(...s.map((x) => x.warnings)), first_warning: s.find((x) => x.first_warning)?.first_warning ?? null };
    }),
  );
  console.log(`${N} packets per run, ${ROUNDS} rounds, medians; Node ${process.version}`);
  for (const r of rows) console.log(`${r.client.padEnd(13)} ${r.op.padEnd(8)} wall ${r.wall_ms.toFixed(0).padStart(6)} ms  main thread ${r.main_thread_ms_per_100k.toFixed(0).padStart(6)} ms/100k  process CPU ${r.cpu_ms_per_100k.toFixed(0).padStart(6)} ms/100k  warnings ${r.warnings}${r.first_warning ? ` (${r.first_warning.slice(0, 80)})` : ''}`);
  if (v.json) writeFileSync(v.json, JSON.stringify({ n: N, rounds: ROUNDS, node: process.version, rows, samples }, null, 2));
}

const brokers = v.brokers ?? process.env.KAFKA_BROKERS;
if (!brokers) throw new Error('set KAFKA_BROKERS (npm run services:start prints it) or --brokers');
await main(brokers);
