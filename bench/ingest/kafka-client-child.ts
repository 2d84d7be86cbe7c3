/**
 * One side of `npm run bench:kafka-clients`, in a process of its own so that its CPU is its own:
 *   tsx bench/ingest/kafka-client-child.ts <kafkajs|platformatic> <produce|consume> BROKERS TOPIC N
 * produce: N packets (realistic tool_call JSON, keyed by task), idempotent, acks from all in-sync
 * replicas, 1,000 per send, one send at a time (as serve and the emitter produce).
 * consume: the topic from the beginning in a fresh group, committing each batch's last offset per
 * partition by hand (as the ingest worker does), until N records were read.
 * Prints JSON: wall, main-thread busy time (event-loop utilization) and process CPU, in ms.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';

const [client, op, brokersArg, topic, nArg] = process.argv.slice(2) as [string, string, string, string, string];
const brokers = brokersArg.split(',');
const N = Number(nArg);
const BATCH = 1_000;

function packet(i: number): { key: string; value: string } {
  const task = `task-${i % 997}`;
  const args = { query: `lookup ${i}`, limit: 10, filters: { region: 'eu', since: '2026-11-01' } };
  const invocation = { call_id: randomUUID(), task_id: task, tool_id: 'search_web', agent_id: 'QA_Agent', orchestrator: 'kernel', instance_id: 'kernel-7', args, args_hash: 'f'.repeat(64), status: 'success', duration_ms: 120 + (i % 50), result_summary: { hits: 10 }, error: null, cost_usd: 0.001, tokens_used: null, created_at: new Date(Date.UTC(2026, 10, 24) + i).toISOString() };
  return { key: task, value: JSON.stringify({ type: 'tool_call', call_id: invocation.call_id, invocation }) };
}

async function kafkajsProduce(): Promise<void> {
  const { Kafka, logLevel } = await import('kafkajs');
  const producer = new Kafka({ clientId: 'bench', brokers, logLevel: logLevel.NOTHING }).producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (let i = 0; i < N; i += BATCH) await producer.send({ topic, acks: -1, messages: Array.from({ length: Math.min(BATCH, N - i) }, (_, j) => packet(i + j)) });
  await producer.disconnect();
}

async function platformaticProduce(): Promise<void> {
  const { Producer, stringSerializers } = await import('@platformatic/kafka');
  const producer = new Producer({ clientId: 'bench', bootstrapBrokers: brokers, serializers: stringSerializers, idempotent: true, acks: -1 });
  for (let i = 0; i < N; i += BATCH) await producer.send({ messages: Array.from({ length: Math.min(BATCH, N - i) }, (_, j) => ({ topic, ...packet(i + j) })) });
  await producer.close();
}

async function kafkajsConsume(): Promise<number> {
  const { Kafka, logLevel } = await import('kafkajs');
  const consumer = new Kafka({ clientId: 'bench', brokers, logLevel: logLevel.NOTHING }).consumer({ groupId: `bench-${randomUUID()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let read = 0;
  let bytes = 0;
  await new Promise<void>((resolve) => {
    void consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset }) => {
        for (const m of batch.messages) bytes += m.value?.length ?? 0;
        read += batch.messages.length;
        const last = batch.messages.at(-1);
        if (last) {
          resolveOffset(last.offset);
          await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: (BigInt(last.offset) + 1n).toString() }]);
        }
        if (read >= N) resolve();
      },
    });
  });
  await consumer.disconnect();
  return bytes;
}

async function platformaticConsume(): Promise<number> {
  const { Consumer, stringDeserializers } = await import('@platformatic/kafka');
  const consumer = new Consumer({ clientId: 'bench', groupId: `bench-${randomUUID()}`, bootstrapBrokers: brokers, deserializers: stringDeserializers });
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false });
  let read = 0;
  let bytes = 0;
  // The last record seen per partition, committed every 5,000 records and at the end: a batch's commit.
  const last = new Map<number, { commit(): void | Promise<void> }>();
  for await (const m of stream) {
    bytes += (m.value as string).length;
    last.set(m.partition, m);
    if (++read % 5_000 === 0 || read >= N) {
      await Promise.all([...last.values()].map((x) => x.commit()));
      last.clear();
    }
    if (read >= N) break;
  }
  await stream.close();
  await consumer.close();
  return bytes;
}

const run: Record<string, () => Promise<unknown>> = {
  'kafkajs:produce': kafkajsProduce,
  'platformatic:produce': platformaticProduce,
  'kafkajs:consume': kafkajsConsume,
  'platformatic:consume': platformaticConsume,
};
const warnings: string[] = [];
process.on('warning', (w) => warnings.push(`${w.name}: ${w.message}`));
const elu0 = performance.eventLoopUtilization();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await (run[`${client}:${op}`] as () => Promise<unknown>)();
const wall = performance.now() - t0;
const elu = performance.eventLoopUtilization(elu0);
const cpu = process.cpuUsage(cpu0);
process.stdout.write(`${JSON.stringify({ client, op, n: N, wall_ms: wall, main_thread_busy_ms: elu.active, cpu_ms: (cpu.user + cpu.system) / 1000, warnings: warnings.length, first_warning: warnings[0] ?? null })}\n`);
process.exit(0);
