/**
 * Ingest benchmark (issue 7): one topic, one machine, one run.
 *
 *   1. produces a realistic stream (bench/ingest-workload.ts: 1,000,000 tool_calls by default plus
 *      their outputs, redeliveries, a few invalid packets) to a fresh topic;
 *   2. (a) runs `tool-audit ingest` as a child process on embedded ClickHouse in a fresh data
 *      directory until its consumer group has committed every offset (offsets are committed only
 *      once rows are durable), then verifies the rows against what was generated;
 *   3. (b) runs ClickHouse's own Kafka table engine + materialized views (bench/ingest-kafka-engine.ts)
 *      in another child process and data directory on the same topic, until its tables hold a row
 *      per message;
 *   4. prints packets/s, MB/s, CPU seconds per 100k packets, peak RSS and the ratio (a)/(b).
 *
 * Kafka: KAFKA_BROKERS when set; otherwise a private broker is started with
 * scripts/kafka-services.sh (TOOL_AUDIT_SERVICES_DIR=<tmp>/tool-audit-bench-kafka, port
 * BENCH_KAFKA_PORT or 29092) and stopped at the end.
 *
 *   npm run bench:ingest -- [--tool-calls 1000000] [--partitions 6] [--only a|b] [--reuse-topic T]
 *                           [--ingest-env KEY=VALUE]… [--profile DIR] [--keep] [--engine-consumers 2] …
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { groupLag } from '../test/helpers/kafka.ts';
import { emptyCounts, workload, type WorkloadCounts, type WorkloadMessage } from './ingest-workload.ts';

const ROOT = new URL('../', import.meta.url).pathname;
const { values: opt } = parseArgs({
  options: {
    'tool-calls': { type: 'string', default: '1000000' },
    partitions: { type: 'string', default: '6' },
    only: { type: 'string', default: 'ab' },
    'reuse-topic': { type: 'string' },
    'ingest-env': { type: 'string', multiple: true, default: [] },
    profile: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'engine-consumers': { type: 'string', default: '2' },
    'engine-thread-per-consumer': { type: 'string', default: '1' },
    'engine-flush-ms': { type: 'string', default: '1000' },
    'engine-max-block': { type: 'string', default: '1048576' },
    'timeout-s': { type: 'string', default: '1800' },
    json: { type: 'string' },
  },
});

const TOOL_CALLS = Number(opt['tool-calls']);
const PARTITIONS = Number(opt.partitions);
const TIMEOUT_MS = Number(opt['timeout-s']) * 1000;
const HZ = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
const stateDir = join(tmpdir(), 'tool-audit-bench');
mkdirSync(stateDir, { recursive: true });
const log = (msg: string) => process.stderr.write(`[bench:ingest] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------------------------------
// /proc accounting
// ------------------------------------------------------------------------------------------
/** CPU seconds (user + system, all threads) of a process. */
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / HZ;
  } catch {
    return 0;
  }
}
/** Peak resident set (VmHWM) in MiB. */
function peakRssMiB(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}
/** CPU seconds per thread name (comm) of a process, summed over threads of the same name. */
function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[0-9]+$/, '#');
      // Unnamed threads (libuv pool running chDB queries, decode worker threads) are listed one by one.
      const name = tid === String(pid) ? 'main' : comm === 'node' ? `node/${tid}` : comm;
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) / HZ);
    } catch {
      // the thread ended
    }
  }
  return out;
}

function threadReport(a: Map<string, number>, b: Map<string, number>): string {
  const delta = [...b].map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const).filter(([, v]) => v >= 0.05);
  delta.sort((x, y) => y[1] - x[1]);
  // Unnamed node threads: "node#1" is the busiest (the decode thread when there is one).
  let n = 0;
  return delta
    .slice(0, 10)
    .map(([k, v]) => `${k.startsWith('node/') ? `node#${++n}` : k} ${v.toFixed(1)}s`)
    .join(', ');
}

/** Busy CPU seconds of the whole machine. */
function machineBusySeconds(): number {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - (f[3] ?? 0) - (f[4] ?? 0)) / HZ;
}

interface Sample {
  t: number;
  cpu: number;
  broker: number;
  machine: number;
  threads: Map<string, number>;
}
const sample = (pid: number, brokerPid: number | undefined): Sample => ({
  t: performance.now(),
  cpu: cpuSeconds(pid),
  broker: cpuSeconds(brokerPid),
  machine: machineBusySeconds(),
  threads: threadCpu(pid),
});

interface PhaseResult {
  name: string;
  packets: number;
  bytes: number;
  seconds: number;
  secondsFromSpawn: number;
  cpuSeconds: number;
  peakRssMiB: number;
  brokerCpuSeconds: number;
  otherCpuCores: number;
  load: string;
  threads: string;
  verified: string;
}

function phaseResult(name: string, counts: WorkloadCounts, spawnAt: number, a: Sample, b: Sample, pid: number, verified: string): PhaseResult {
  const seconds = (b.t - a.t) / 1000;
  const cpu = b.cpu - a.cpu;
  const broker = b.broker - a.broker;
  return {
    name,
    packets: counts.messages,
    bytes: counts.bytes,
    seconds,
    secondsFromSpawn: (b.t - spawnAt) / 1000,
    cpuSeconds: cpu,
    peakRssMiB: peakRssMiB(pid),
    brokerCpuSeconds: broker,
    otherCpuCores: Math.max(0, (b.machine - a.machine - cpu - broker) / seconds),
    load: loadavg().map((l) => l.toFixed(2)).join(' '),
    threads: threadReport(a.threads, b.threads),
    verified,
  };
}

// ------------------------------------------------------------------------------------------
// Kafka broker and topic
// ------------------------------------------------------------------------------------------
const servicesDir = join(tmpdir(), 'tool-audit-bench-kafka');
const brokerPort = process.env.BENCH_KAFKA_PORT ?? '29092';
const scriptEnv = { ...process.env, TOOL_AUDIT_SERVICES_DIR: servicesDir, TOOL_AUDIT_KAFKA_PORT: brokerPort };
let startedBroker = false;

function startBroker(): { brokers: string; pid: number | undefined } {
  if (process.env.KAFKA_BROKERS) {
    log(`using KAFKA_BROKERS=${process.env.KAFKA_BROKERS}`);
    return { brokers: process.env.KAFKA_BROKERS, pid: undefined };
  }
  log(`starting a private Kafka broker (TOOL_AUDIT_SERVICES_DIR=${servicesDir}, port ${brokerPort})`);
  const args = ['scripts/kafka-services.sh', 'start', ...(opt['reuse-topic'] ? ['--keep-data'] : [])];
  const out = execFileSync('bash', args, { cwd: ROOT, env: scriptEnv, stdio: ['ignore', 'pipe', 'inherit'] }).toString();
  startedBroker = true;
  const line = out.split('\n').find((l) => l.startsWith('KAFKA_BROKERS='));
  if (!line) throw new Error(`kafka-services.sh printed no KAFKA_BROKERS line: ${out}`);
  const pidFile = join(servicesDir, 'pid');
  return { brokers: line.slice('KAFKA_BROKERS='.length), pid: existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : undefined };
}

function stopBroker(): void {
  if (!startedBroker || opt.keep) return;
  startedBroker = false;
  log('stopping the private Kafka broker');
  execFileSync('bash', ['scripts/kafka-services.sh', 'stop'], { cwd: ROOT, env: scriptEnv, stdio: ['ignore', 'inherit', 'inherit'] });
}

async function produce(kafka: Kafka, topic: string): Promise<WorkloadCounts> {
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
  const counts = emptyCounts();
  const t0 = performance.now();
  const inflight = new Set<Promise<unknown>>();
  let batch: WorkloadMessage[] = [];
  let lastLog = t0;
  const flush = async () => {
    const p = producer.send({ topic, acks: -1, messages: batch }).finally(() => inflight.delete(p));
    inflight.add(p);
    batch = [];
    if (inflight.size >= 8) await Promise.race(inflight);
  };
  for (const m of workload({ toolCalls: TOOL_CALLS }, counts)) {
    batch.push(m);
    if (batch.length >= 2000) await flush();
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      log(`produced ${counts.messages.toLocaleString('en')} messages (${counts.toolCalls.toLocaleString('en')} tool_calls)`);
    }
  }
  if (batch.length) await flush();
  await Promise.all(inflight);
  await producer.disconnect();
  const s = (performance.now() - t0) / 1000;
  log(`produced ${counts.messages.toLocaleString('en')} messages, ${(counts.bytes / 1e6).toFixed(0)} MB in ${s.toFixed(1)} s`);
  return counts;
}

// ------------------------------------------------------------------------------------------
// children
// ------------------------------------------------------------------------------------------
const exited = (c: ChildProcess) =>
  new Promise<number | null>((r) => (c.exitCode !== null || c.signalCode ? r(c.exitCode) : c.once('exit', (code) => r(code))));
const children = new Set<ChildProcess>();

async function stopChild(c: ChildProcess, what: string): Promise<void> {
  c.kill('SIGTERM');
  const t = setTimeout(() => {
    log(`${what} did not stop within 60 s; SIGKILL`);
    c.kill('SIGKILL');
  }, 60_000);
  await exited(c);
  clearTimeout(t);
  children.delete(c);
}

async function runOurs(brokers: string, brokerPid: number | undefined, topic: string, counts: WorkloadCounts, kafka: Kafka): Promise<PhaseResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tool-audit-bench-a-'));
  const group = `bench-a-${randomBytes(4).toString('hex')}`;
  const extra = Object.fromEntries((opt['ingest-env'] as string[]).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const env: Record<string, string | undefined> = {
    ...process.env,
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC: topic,
    KAFKA_DLQ_TOPIC: `${topic}.dlq`,
    KAFKA_GROUP_ID: group,
    TOOL_AUDIT_DATA_DIR: dataDir,
    CLICKHOUSE_DATABASE: 'tool_audit',
    LOG_LEVEL: 'info',
    PORT: String(30000 + Math.floor(Math.random() * 20000)),
    ...extra,
  };
  delete env.CLICKHOUSE_URL;
  const nodeArgs = opt.profile ? ['--cpu-prof', `--cpu-prof-dir=${opt.profile}`] : [];
  log(`(a) tool-audit ingest: data ${dataDir}, group ${group}${Object.keys(extra).length ? `, ${JSON.stringify(extra)}` : ''}`);
  const spawnAt = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, join(ROOT, 'bin/tool-audit.mjs'), 'ingest'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  const pid = child.pid as number;
  let stderr = '';
  let ready: () => void = () => undefined;
  const isReady = new Promise<void>((r) => (ready = r));
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-50_000);
    if (stderr.includes('tool-audit ingest consuming')) ready();
  });
  await Promise.race([isReady, exited(child).then((code) => Promise.reject(new Error(`ingest exited (${code}) before consuming:\n${stderr}`)))]);
  const a = sample(pid, brokerPid);
  const admin = kafka.admin();
  await admin.connect();
  let lastLog = performance.now();
  for (;;) {
    const lag = await groupLag(admin, group, topic);
    if (lag === 0) break;
    if (child.exitCode !== null) throw new Error(`ingest exited (${child.exitCode}):\n${stderr}`);
    if (performance.now() - a.t > TIMEOUT_MS) throw new Error(`(a) timed out with lag ${lag}`);
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      log(`(a) lag ${lag.toLocaleString('en')}, ${((counts.messages - lag) / ((performance.now() - a.t) / 1000)).toFixed(0)} packets/s so far`);
    }
    await sleep(200);
  }
  const b = sample(pid, brokerPid);
  await admin.disconnect();
  const hwm = peakRssMiB(pid);
  const stages = await fetch(`http://127.0.0.1:${env.PORT}/metrics`)
    .then((r) => r.text())
    .then((t) =>
      t
        .split('\n')
        .filter((l) => l.startsWith('tool_audit_ingest_stage_seconds_total') || l.startsWith('tool_audit_ingest_commit_rounds_total'))
        .map((l) => l.replace('tool_audit_ingest_stage_seconds_total', 'stage').replace('tool_audit_ingest_', ''))
        .join(', '),
    )
    .catch(() => '');
  await stopChild(child, 'ingest');

  // Verification: the data directory is free again; this process opens no other one.
  const { createClickHouse } = await import('../platform/clickhouse/client.ts');
  const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: 'tool_audit', dataDir });
  const rs = await ch.query({
    query: `SELECT (SELECT count() FROM tool_audit.tool_invocations) AS inv, (SELECT uniqExact(call_id) FROM tool_audit.tool_invocations) AS inv_u,
                   (SELECT count() FROM tool_audit.tool_outputs) AS out, (SELECT uniqExact(output_id) FROM tool_audit.tool_outputs) AS out_u,
                   (SELECT count() FROM tool_audit.quarantine) AS q`,
    format: 'JSONEachRow',
  });
  const [got] = await rs.json<Record<string, string>>();
  await ch.close();
  const e = counts.expect;
  const ok =
    Number(got?.inv) === e.invocations && got?.inv === got?.inv_u && Number(got?.out) === e.outputs && got?.out === got?.out_u && Number(got?.q) === e.quarantine;
  const verified = `${ok ? 'OK' : 'MISMATCH'}: invocations ${got?.inv}/${e.invocations} (unique ${got?.inv_u}), outputs ${got?.out}/${e.outputs} (unique ${got?.out_u}), quarantine ${got?.q}/${e.quarantine}`;
  log(`(a) ${verified}`);
  rmSync(dataDir, { recursive: true, force: true });
  const r = phaseResult('(a) tool-audit ingest', counts, spawnAt, a, b, pid, verified);
  r.peakRssMiB = hwm;
  if (stages) r.threads += `; ${stages}`;
  if (!ok) process.exitCode = 1;
  return r;
}

async function runEngine(brokers: string, brokerPid: number | undefined, topic: string, counts: WorkloadCounts): Promise<PhaseResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tool-audit-bench-b-'));
  const group = `bench-b-${randomBytes(4).toString('hex')}`;
  const o = {
    dataDir,
    database: 'tool_audit',
    brokers,
    topic,
    group,
    expect: counts.messages,
    timeoutMs: TIMEOUT_MS,
    consumers: Number(opt['engine-consumers']),
    threadPerConsumer: opt['engine-thread-per-consumer'] === '1',
    flushMs: Number(opt['engine-flush-ms']),
    maxBlockSize: Number(opt['engine-max-block']),
    pollMs: 200,
  };
  log(`(b) Kafka engine + MV: data ${dataDir}, group ${group}, ${o.consumers} consumer(s), thread per consumer ${o.threadPerConsumer}, flush ${o.flushMs} ms, block ${o.maxBlockSize}`);
  const spawnAt = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/ingest-kafka-engine.ts'), JSON.stringify(o)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  const pid = child.pid as number;
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
  let buf = '';
  let a: Sample | undefined;
  let b: Sample | undefined;
  let hwm = NaN;
  let final: Record<string, number> = {};
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const ev = JSON.parse(line) as { event: string } & Record<string, number>;
        if (ev.event === 'ready') a = sample(pid, brokerPid);
        else if (ev.event === 'progress' && a) {
          log(`(b) ${(ev.total ?? 0).toLocaleString('en')} rows, ${((ev.total ?? 0) / ((performance.now() - a.t) / 1000)).toFixed(0)} packets/s so far`);
        } else if (ev.event === 'done' || ev.event === 'timeout') {
          b = sample(pid, brokerPid);
          hwm = peakRssMiB(pid);
          final = ev;
          if (ev.event === 'done') resolve();
          else reject(new Error(`(b) timed out: ${line}`));
        }
      }
    });
    void exited(child).then((code) => reject(new Error(`(b) exited (${code}) early:\n${stderr}`)));
  });
  await stopChild(child, 'Kafka engine');
  rmSync(dataDir, { recursive: true, force: true });
  const verified = `rows ${final.total}/${counts.messages} (invocations ${final.invocations}, outputs ${final.outputs}, broken ${final.quarantine})`;
  log(`(b) ${verified}`);
  const r = phaseResult('(b) ClickHouse Kafka engine + MV', counts, spawnAt, a as Sample, b as Sample, pid, verified);
  r.peakRssMiB = hwm;
  return r;
}

// ------------------------------------------------------------------------------------------
// report
// ------------------------------------------------------------------------------------------
function table(results: PhaseResult[], counts: WorkloadCounts, topic: string): string {
  const fmt = (n: number, d = 0) => n.toLocaleString('en', { minimumFractionDigits: d, maximumFractionDigits: d });
  const head = ['', 'packets', 'seconds', 'packets/s', 'MB/s', 'CPU s/100k', 'peak RSS MiB', 'broker CPU s/100k', 'other load (cores)', 'from spawn s'];
  const rows = results.map((r) => [
    r.name,
    fmt(r.packets),
    fmt(r.seconds, 1),
    fmt(r.packets / r.seconds),
    fmt(r.bytes / 1e6 / r.seconds, 1),
    fmt((r.cpuSeconds / r.packets) * 100_000, 2),
    fmt(r.peakRssMiB),
    fmt((r.brokerCpuSeconds / r.packets) * 100_000, 2),
    fmt(r.otherCpuCores, 2),
    fmt(r.secondsFromSpawn, 1),
  ]);
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  const out = [
    `topic ${topic}: ${fmt(counts.messages)} packets (${fmt(counts.toolCalls)} tool_calls, ${fmt(counts.outputs)} outputs, ${fmt(counts.redeliveries)} redeliveries, ${fmt(counts.invalid)} invalid, ${fmt(counts.reusedCallIds)} reused call_ids), ${fmt(counts.bytes / 1e6, 1)} MB`,
    line(head),
    ...rows.map(line),
  ];
  const [ours, engine] = results;
  if (ours && engine && ours.name.startsWith('(a)') && engine.name.startsWith('(b)')) {
    out.push(
      `ratio (a)/(b): throughput ${(ours.seconds > 0 ? engine.seconds / ours.seconds : NaN).toFixed(2)}, ` +
        `CPU efficiency ${(engine.cpuSeconds / ours.cpuSeconds).toFixed(2)} (CPU per packet of (b) over (a))`,
    );
  }
  for (const r of results) out.push(`${r.name}: ${r.verified}; load average at end ${r.load}`);
  for (const r of results) out.push(`${r.name} CPU by thread: ${r.threads}`);
  return out.join('\n');
}

async function main(): Promise<void> {
  const { brokers, pid: brokerPid } = startBroker();
  const kafka = new Kafka({ clientId: 'bench-ingest', brokers: brokers.split(','), logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 200 } });
  let topic: string;
  let counts: WorkloadCounts;
  if (opt['reuse-topic']) {
    topic = opt['reuse-topic'];
    counts = JSON.parse(readFileSync(join(stateDir, `${topic}.json`), 'utf8')) as WorkloadCounts;
    log(`reusing topic ${topic} (${counts.messages.toLocaleString('en')} messages)`);
  } else {
    topic = `bench.ingest.${Date.now().toString(36)}`;
    log(`producing ${TOOL_CALLS.toLocaleString('en')} tool_calls and their outputs to ${topic} (${PARTITIONS} partitions)`);
    counts = await produce(kafka, topic);
    writeFileSync(join(stateDir, `${topic}.json`), JSON.stringify(counts));
  }
  const results: PhaseResult[] = [];
  if (opt.only?.includes('a')) results.push(await runOurs(brokers, brokerPid, topic, counts, kafka));
  if (opt.only?.includes('b')) results.push(await runEngine(brokers, brokerPid, topic, counts));
  const text = table(results, counts, topic);
  process.stdout.write(`\n${text}\n`);
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ topic, counts, results }, null, 2));
  if (!opt.keep && !opt['reuse-topic']) {
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
    await admin.disconnect();
  }
}

const cleanup = () => {
  for (const c of children) c.kill('SIGKILL');
  try {
    stopBroker();
  } catch (err) {
    log(`stopping the broker failed: ${(err as Error).message}`);
  }
};
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});
main().then(
  () => {
    cleanup();
    process.exit();
  },
  (err: unknown) => {
    log(`failed: ${(err as Error).stack ?? String(err)}`);
    cleanup();
    process.exit(1);
  },
);
