/**
 * The topics of the ingest benchmark (bench/ingest/ingest.ts): the workload topic (bench/ingest/ingest-workload.ts)
 * and, with `--reject-share`, the reject topic generated from it (bench/ingest/ingest-rejects.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Partitioners, type Kafka } from 'kafkajs';
import { emptyCounts, workload, type WorkloadCounts, type WorkloadMessage, type WorkloadOptions } from './ingest-workload.ts';
import { emptyRejectCounts, rejectedTotal, rejectWorkload, type RejectCounts } from './ingest-rejects.ts';
import type { Packets } from './ingest-report.ts';

/** What producing needs. */
export interface TopicOptions {
  kafka: Kafka;
  partitions: number;
  toolCalls: number;
  /** Reuse this first topic (its counts and options saved in stateDir) instead of producing one. */
  reuseTopic: string | undefined;
  rejectShare: number | undefined;
  stateDir: string;
  log: (s: string) => void;
}

/** Creates the topic (and its DLQ) and produces `messages` to it; `counts` is what the generator counts. */
async function produce(o: TopicOptions, topic: string, messages: Iterable<WorkloadMessage>, counts: Packets): Promise<void> {
  const { kafka, partitions: PARTITIONS, log } = o;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic, numPartitions: PARTITIONS, configEntries: [{ name: 'max.message.bytes', value: String(8 * 1024 * 1024) }] },
      { topic: `${topic}.dlq`, numPartitions: 1 },
    ],
    waitForLeaders: true,
  });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: false, allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const t0 = performance.now();
  const inflight = new Set<Promise<unknown>>();
  let batch: Array<{ key: string; value: string }> = [];
  let lastLog = t0;
  const flush = async () => {
    const p = producer.send({ topic, acks: -1, messages: batch }).finally(() => inflight.delete(p));
    inflight.add(p);
    batch = [];
    if (inflight.size >= 8) await Promise.race(inflight);
  };
  for (const m of messages) {
    batch.push({ key: m.key, value: m.value });
    if (batch.length >= 2000) await flush();
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      log(`produced ${counts.messages.toLocaleString('en')} messages to ${topic}`);
    }
  }
  if (batch.length) await flush();
  await Promise.all(inflight);
  await producer.disconnect();
  const s = (performance.now() - t0) / 1000;
  log(`produced ${counts.messages.toLocaleString('en')} messages, ${(counts.bytes / 1e6).toFixed(0)} MB in ${s.toFixed(1)} s to ${topic}`);
}


/** The topics of a run and what they hold. */
export interface Topics {
  topic: string;
  counts: WorkloadCounts;
  rejectTopic?: string;
  rejectCounts?: RejectCounts;
}

/** Produces the first topic (or reuses it) and, with --reject-share, the reject topic generated from it. */
export async function topics(o: TopicOptions): Promise<Topics> {
  const { log, stateDir } = o;
  let topic: string;
  let counts: WorkloadCounts;
  let first: WorkloadOptions;
  if (o.reuseTopic) {
    topic = o.reuseTopic;
    const state = JSON.parse(readFileSync(join(stateDir, `${topic}.json`), 'utf8')) as WorkloadCounts & { options?: WorkloadOptions };
    counts = state;
    first = state.options ?? { toolCalls: counts.toolCalls };
    log(`reusing topic ${topic} (${counts.messages.toLocaleString('en')} messages)`);
  } else {
    topic = `bench.ingest.${Date.now().toString(36)}`;
    // A fixed start, so the reject topic can regenerate this one exactly (created_at included).
    first = { toolCalls: o.toolCalls, startMs: Date.now() - 26 * 3600_000 };
    log(`producing ${o.toolCalls.toLocaleString('en')} tool_calls and their outputs to ${topic} (${o.partitions} partitions)`);
    counts = emptyCounts();
    await produce(o, topic, workload(first, counts), counts);
    writeFileSync(join(stateDir, `${topic}.json`), JSON.stringify({ ...counts, options: first }));
  }
  const REJECT_SHARE = o.rejectShare;
  if (REJECT_SHARE === undefined) return { topic, counts };
  const rejectTopic = `${topic}.rejects.${Date.now().toString(36)}`;
  const rejectCounts = emptyRejectCounts(REJECT_SHARE);
  log(`producing the reject topic ${rejectTopic}: ${counts.messages.toLocaleString('en')} packets, share ${REJECT_SHARE} rejected`);
  await produce(o, rejectTopic, rejectWorkload(first, counts, REJECT_SHARE, rejectCounts), rejectCounts);
  return { topic, counts, rejectTopic, rejectCounts };
}

const fmt = (n: number) => n.toLocaleString('en');

/** One line per topic for the report. */
export function topicLines(t: Topics): string[] {
  const c = t.counts;
  const out = [
    `topic ${t.topic}: ${fmt(c.messages)} packets (${fmt(c.toolCalls)} tool_calls, ${fmt(c.outputs)} outputs, ${fmt(c.redeliveries)} redeliveries, ${fmt(c.invalid)} invalid, ${fmt(c.reusedCallIds)} reused call_ids), ${(c.bytes / 1e6).toFixed(1)} MB`,
  ];
  const r = t.rejectCounts;
  if (r) {
    const x = r.rejected;
    out.push(
      `reject topic ${t.rejectTopic}: ${fmt(r.messages)} packets, ${fmt(rejectedTotal(r))} rejected (I1 ${fmt(x.i1Calls)} tool_calls + ${fmt(x.i1Outputs)} outputs, schema ${fmt(x.schema)}, I5 ${fmt(x.i5)}) ` +
        `+ ${fmt(r.fresh.messages)} fresh (${fmt(r.fresh.invalid + r.fresh.reusedCallIds)} of them rejected by the workload itself), ${(r.bytes / 1e6).toFixed(1)} MB`,
    );
  }
  return out;
}
