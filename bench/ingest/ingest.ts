/**
 * Ingest benchmark: one topic, one machine, one run.
 *
 *   1. produces a realistic stream (bench/ingest/ingest-workload.ts: 1,000,000 tool_calls by default plus
 *      their outputs, redeliveries, a few invalid packets) to a fresh topic;
 *   2. (a) runs `tool-audit ingest` as a child process on embedded ClickHouse in a fresh data
 *      directory until its consumer group has committed every offset (offsets are committed only
 *      once rows are durable), then verifies the rows against what was generated;
 *   3. (b) runs ClickHouse's own Kafka table engine + materialized views (bench/ingest/ingest-kafka-engine.ts)
 *      in another child process and data directory on the same topic, until its tables hold a row
 *      per message;
 *   4. prints packets/s, MB/s, CPU seconds per 100k packets, peak RSS and the ratio (a)/(b).
 *
 * Ingest against a database that is not empty, and packets that are rejected:
 *   --preload N              (a) and (b) each run on a copy of a database already holding N calls
 *                            with their outputs and dependencies (bench:queries' generator, its
 *                            shape scaled: N/100 tasks, over 21 days to stay within retention), built once and cached under
 *                            --preload-dir (default <checkout>/../.bench-preload) by shape
 *                            (bench/ingest/ingest-preload.ts); (a) then expects preload + topic rows.
 *   --preload-quarantine M   …and M quarantined packets (I1 / schema / I5 rows over 30 days).
 *   --preload-copy full|link how a phase gets its copy: `cp -a` (default), or hard-linked parts.
 *   --preload-check          checksums the cache before and after the run (it must not change).
 *   --reject-share S         a second topic of as many packets, a share S of them rejected (80 % I1
 *                            reuses of the first topic's ids, 10 % schema, 10 % I5) and the rest
 *                            fresh (bench/ingest/ingest-rejects.ts); (a) ingests it into the same data
 *                            directory after the first, as a phase of its own. (b) runs the first
 *                            topic only: it validates nothing.
 *
 * Kafka: KAFKA_BROKERS when set; otherwise a private broker is started with
 * scripts/kafka-services.sh (TOOL_AUDIT_SERVICES_DIR=<tmp>/tool-audit-bench-kafka-<port>, port
 * BENCH_KAFKA_PORT or 29092) and stopped at the end.
 *
 *   npm run bench:ingest -- [--tool-calls 1000000] [--partitions 6] [--only a|b] [--reuse-topic T]
 *                           [--ingest-env KEY=VALUE]… [--profile DIR] [--keep] [--engine-consumers 2] …
 *                           [--preload N] [--preload-quarantine M] [--reject-share S] [--json FILE]
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { groupLag } from '../../test/helpers/kafka.ts';
import type { WorkloadCounts } from './ingest-workload.ts';
import { topicLines, topics, type Topics } from './ingest-topics.ts';
import { countRows, ensurePreload, freshDataDir, treeChecksum, type CopyMode, type Preload, type RowCounts } from './ingest-preload.ts';
import { peakRssMiB, phaseResult, rejectPasses, sample, table, type Packets, type PhaseResult, type Sample } from './ingest-report.ts';
import { runBench } from '../bench-process.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
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
    preload: { type: 'string', default: '0' },
    'preload-quarantine': { type: 'string', default: '0' },
    'preload-dir': { type: 'string' },
    'preload-copy': { type: 'string', default: 'full' },
    'preload-check': { type: 'boolean', default: false },
    'reject-share': { type: 'string' },
    repeat: { type: 'string', default: '1' },
  },
});

const TOOL_CALLS = Number(opt['tool-calls']);
const PARTITIONS = Number(opt.partitions);
const TIMEOUT_MS = Number(opt['timeout-s']) * 1000;
const PRELOAD = Number(opt.preload);
const REPEAT = Number(opt.repeat);
const PRELOAD_QUARANTINE = Number(opt['preload-quarantine']);
const PRELOAD_DIR = resolve(opt['preload-dir'] ?? process.env.BENCH_PRELOAD_DIR ?? join(ROOT, '..', '.bench-preload'));
const COPY_MODE = opt['preload-copy'] as CopyMode;
const REJECT_SHARE = opt['reject-share'] === undefined ? undefined : Number(opt['reject-share']);
if (!(PRELOAD >= 0 && PRELOAD_QUARANTINE >= 0) || !['full', 'link'].includes(COPY_MODE)) throw new Error('--preload, --preload-quarantine must be ≥ 0, --preload-copy full|link');
if (!(Number.isInteger(REPEAT) && REPEAT >= 1)) throw new Error('--repeat must be a whole number ≥ 1');
if (REJECT_SHARE !== undefined && !(REJECT_SHARE >= 0 && REJECT_SHARE <= 1)) throw new Error('--reject-share must be within 0..1');
const stateDir = join(tmpdir(), 'tool-audit-bench');
mkdirSync(stateDir, { recursive: true });
const log = (msg: string) => process.stderr.write(`[bench:ingest] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------------------------------
// Kafka broker and topic
// ------------------------------------------------------------------------------------------
const brokerPort = process.env.BENCH_KAFKA_PORT ?? '29092';
// One services directory per port: two benchmarks on different ports must not share (and stop) one broker.
const servicesDir = join(tmpdir(), `tool-audit-bench-kafka-${brokerPort}`);
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

/** One run of `tool-audit ingest` over a topic, into a data directory that may already hold rows. */
interface OursPhase {
  name: string;
  topic: string;
  dataDir: string;
  packets: Packets;
  /** Rows the topic must add. */
  expect: { invocations: number; outputs: number; quarantine: number };
  /** Rows the directory held before. */
  before: RowCounts;
}

/** Runs (a) on one topic until its group has no lag, then verifies the rows; returns the result and the rows after. */
async function runOurs(brokers: string, brokerPid: number | undefined, kafka: Kafka, ph: OursPhase): Promise<{ result: PhaseResult; after: RowCounts }> {
  const group = `bench-a-${randomBytes(4).toString('hex')}`;
  const extra = Object.fromEntries((opt['ingest-env'] as string[]).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const env: Record<string, string | undefined> = {
    ...process.env,
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC: ph.topic,
    KAFKA_DLQ_TOPIC: `${ph.topic}.dlq`,
    KAFKA_GROUP_ID: group,
    TOOL_AUDIT_DATA_DIR: ph.dataDir,
    CLICKHOUSE_DATABASE: 'tool_audit',
    LOG_LEVEL: 'info',
    PORT: String(30000 + Math.floor(Math.random() * 20000)),
    ...extra,
  };
  delete env.CLICKHOUSE_URL;
  const nodeArgs = opt.profile ? ['--cpu-prof', `--cpu-prof-dir=${opt.profile}`] : [];
  log(`${ph.name}: topic ${ph.topic}, data ${ph.dataDir}, group ${group}${Object.keys(extra).length ? `, ${JSON.stringify(extra)}` : ''}`);
  const spawnAt = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, join(ROOT, 'bin/tool-audit.mjs'), 'ingest'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  const pid = child.pid as number;
  let stderr = '';
  let migrated = false;
  let ready: () => void = () => undefined;
  const isReady = new Promise<void>((r) => (ready = r));
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-50_000);
    // On a preloaded copy every migration is applied already: its migrate() must change nothing.
    if (stderr.includes('migrations applied')) migrated = true;
    if (stderr.includes('tool-audit ingest consuming')) ready();
  });
  await Promise.race([isReady, exited(child).then((code) => Promise.reject(new Error(`ingest exited (${code}) before consuming:\n${stderr}`)))]);
  const a = sample(pid, brokerPid);
  const admin = kafka.admin();
  await admin.connect();
  let lastLog = performance.now();
  for (;;) {
    const lag = await groupLag(admin, group, ph.topic);
    if (lag === 0) break;
    if (child.exitCode !== null) throw new Error(`ingest exited (${child.exitCode}):\n${stderr}`);
    if (performance.now() - a.t > TIMEOUT_MS) throw new Error(`${ph.name} timed out with lag ${lag}`);
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      log(`${ph.name} lag ${lag.toLocaleString('en')}, ${((ph.packets.messages - lag) / ((performance.now() - a.t) / 1000)).toFixed(0)} packets/s so far`);
    }
    await sleep(200);
  }
  const b = sample(pid, brokerPid);
  await admin.disconnect();
  const hwm = peakRssMiB(pid);
  const stages = await stageMetrics(env.PORT as string);
  await stopChild(child, 'ingest');
  const { verified, after } = await verifyOurs(ph, migrated);
  const result = phaseResult(ph.name, ph.packets, spawnAt, a, b, pid, verified);
  result.peakRssMiB = hwm;
  if (stages) result.threads += `; ${stages}`;
  return { result, after };
}

/** Stage timings and commit rounds from the ingest child's /metrics. */
function stageMetrics(port: string): Promise<string> {
  return fetch(`http://127.0.0.1:${port}/metrics`)
    .then((r) => r.text())
    .then((t) =>
      t
        .split('\n')
        .filter((l) => l.startsWith('tool_audit_ingest_stage_seconds_total') || l.startsWith('tool_audit_ingest_commit_rounds_total'))
        .map((l) => l.replace('tool_audit_ingest_stage_seconds_total', 'stage').replace('tool_audit_ingest_', ''))
        .join(', '),
    )
    .catch(() => '');
}

/** Rows after = rows before + what the topic adds: each key once, every rejected packet quarantined. */
async function verifyOurs(ph: OursPhase, migrated: boolean): Promise<{ verified: string; after: RowCounts }> {
  // Counted in a child: the data directory is free again once the ingest child has exited.
  const got = await countRows(ph.dataDir, log);
  const e = { invocations: ph.before.invocations + ph.expect.invocations, outputs: ph.before.outputs + ph.expect.outputs, quarantine: ph.before.quarantine + ph.expect.quarantine };
  const ok =
    got.invocations === e.invocations &&
    got.invocations === got.invocationsUnique &&
    got.outputs === e.outputs &&
    got.outputs === got.outputsUnique &&
    got.quarantine === e.quarantine &&
    !(migrated && PRELOAD + PRELOAD_QUARANTINE > 0);
  const grew = (k: 'invocations' | 'outputs' | 'quarantine') => `+${(got[k] - ph.before[k]).toLocaleString('en')}/${ph.expect[k].toLocaleString('en')}`;
  const verified =
    `${ok ? 'OK' : 'MISMATCH'}: invocations ${got.invocations}/${e.invocations} (unique ${got.invocationsUnique}, ${grew('invocations')}), ` +
    `outputs ${got.outputs}/${e.outputs} (unique ${got.outputsUnique}, ${grew('outputs')}), quarantine ${got.quarantine}/${e.quarantine} (${grew('quarantine')})` +
    (migrated && PRELOAD + PRELOAD_QUARANTINE > 0 ? '; migrations were applied to the preloaded copy' : '');
  log(`${ph.name} ${verified}`);
  if (!ok) process.exitCode = 1;
  return { verified, after: got };
}

/** Runs (b) on the first topic, in its own data directory (a copy of the preload, or empty), until every message is a row. */
async function runEngine(brokers: string, brokerPid: number | undefined, topic: string, counts: WorkloadCounts, dataDir: string, before: RowCounts): Promise<PhaseResult> {
  const group = `bench-b-${randomBytes(4).toString('hex')}`;
  const o = {
    dataDir,
    database: 'tool_audit',
    brokers,
    topic,
    group,
    expect: counts.messages,
    // Rows already there: the preload's calls, outputs and quarantine.
    base: before.invocations + before.outputs + before.quarantine,
    timeoutMs: TIMEOUT_MS,
    consumers: Number(opt['engine-consumers']),
    threadPerConsumer: opt['engine-thread-per-consumer'] === '1',
    flushMs: Number(opt['engine-flush-ms']),
    maxBlockSize: Number(opt['engine-max-block']),
    pollMs: 200,
  };
  log(`(b) Kafka engine + MV: data ${dataDir}, group ${group}, ${o.consumers} consumer(s), thread per consumer ${o.threadPerConsumer}, flush ${o.flushMs} ms, block ${o.maxBlockSize}`);
  const spawnAt = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/ingest/ingest-kafka-engine.ts'), JSON.stringify(o)], {
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
  let migrations = 0;
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const ev = JSON.parse(line) as { event: string } & Record<string, number>;
        if (ev.event === 'ready') {
          a = sample(pid, brokerPid);
          migrations = ev.migrationsApplied ?? 0;
        } else if (ev.event === 'progress' && a) {
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
  const verified =
    `new rows ${final.total}/${counts.messages} (invocations ${final.invocations}, outputs ${final.outputs}, broken ${final.quarantine}, preloaded rows included)` +
    (o.base > 0 ? `; migrations applied to the preloaded copy: ${migrations}` : '');
  log(`(b) ${verified}`);
  const r = phaseResult('(b) ClickHouse Kafka engine + MV', counts, spawnAt, a as Sample, b as Sample, pid, verified);
  r.peakRssMiB = hwm;
  return r;
}

/**
 * (a) on the first topic, then (with --reject-share) on the reject topic in the same data
 * directory; pass k of --repeat names its phases `… #k`.
 */
async function phasesOurs(brokers: string, brokerPid: number | undefined, kafka: Kafka, t: Topics, preload: Preload, pass: string): Promise<PhaseResult[]> {
  const { dataDir, copySeconds } = freshDataDir(preload, 'tool-audit-bench-a-', COPY_MODE);
  if (preload.dataDir) log(`(a) preload copied (${COPY_MODE}) in ${copySeconds.toFixed(1)} s`);
  copies.push(copySeconds);
  const results: PhaseResult[] = [];
  try {
    const accept = await runOurs(brokers, brokerPid, kafka, { name: `(a) accept${pass}`, topic: t.topic, dataDir, packets: t.counts, expect: t.counts.expect, before: preload.counts });
    results.push(accept.result);
    if (t.rejectTopic && t.rejectCounts) {
      const rc = t.rejectCounts;
      const rejects = await runOurs(brokers, brokerPid, kafka, { name: `(a) reject-mix${pass}`, topic: t.rejectTopic, dataDir, packets: rc, expect: rc.expect, before: accept.after });
      results.push(rejects.result);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return results;
}

const copies: number[] = [];
const fmt = (n: number) => n.toLocaleString('en');

async function main(): Promise<void> {
  const preload = await ensurePreload(PRELOAD, PRELOAD_QUARANTINE, PRELOAD_DIR, log);
  const preloadLine =
    `preload N = ${fmt(PRELOAD)} calls${PRELOAD ? ` (${fmt(preload.shape.tasks)} tasks, ${preload.shape.days} days: ${fmt(preload.counts.invocations)} invocations, ${fmt(preload.counts.outputs)} outputs, ${fmt(preload.counts.workflows)} dependencies)` : ''}, ` +
    `M = ${fmt(PRELOAD_QUARANTINE)} quarantined, reject share S = ${REJECT_SHARE ?? 'none'}` +
    (preload.dataDir ? `; cache ${preload.dataDir} (${(preload.sizeBytes / 1e9).toFixed(2)} GB, built in ${preload.buildSeconds.toFixed(0)} s${preload.builtNow ? ' now' : ' earlier'}), copies: ${COPY_MODE}` : '');
  process.stdout.write(`${preloadLine}\n`);
  const checkBefore = opt['preload-check'] && preload.dataDir ? treeChecksum(preload.dataDir) : undefined;
  const { brokers, pid: brokerPid } = startBroker();
  const kafka = new Kafka({ clientId: 'bench-ingest', brokers: brokers.split(','), logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 200 } });
  const t = await topics({ kafka, partitions: PARTITIONS, toolCalls: TOOL_CALLS, reuseTopic: opt['reuse-topic'], rejectShare: REJECT_SHARE, stateDir, log });
  const results: PhaseResult[] = [];
  // A machine's noise moves one pass by ±15 %: --repeat K runs (a) K times, each from a fresh copy.
  if (opt.only?.includes('a')) for (let k = 1; k <= REPEAT; k++) results.push(...(await phasesOurs(brokers, brokerPid, kafka, t, preload, REPEAT > 1 ? ` #${k}` : '')));
  if (opt.only?.includes('b')) {
    const { dataDir, copySeconds } = freshDataDir(preload, 'tool-audit-bench-b-', COPY_MODE);
    if (preload.dataDir) log(`(b) preload copied (${COPY_MODE}) in ${copySeconds.toFixed(1)} s`);
    copies.push(copySeconds);
    results.push(await runEngine(brokers, brokerPid, t.topic, t.counts, dataDir, preload.counts));
  }
  const copyLine = preload.dataDir ? [`preload copies (${COPY_MODE}): ${copies.map((s) => `${s.toFixed(1)} s`).join(', ')}`] : [];
  const checkLine = checkBefore ? [`preload cache unchanged by the run: ${treeChecksum(preload.dataDir as string) === checkBefore ? 'yes' : 'NO'}`] : [];
  const text = table(results, { preload: preloadLine, topics: [...copyLine, ...checkLine, ...topicLines(t)] });
  process.stdout.write(`\n${text}\n`);
  if (opt.json) {
    const run = { preload: PRELOAD, preloadQuarantine: PRELOAD_QUARANTINE, rejectShare: REJECT_SHARE ?? null, copyMode: COPY_MODE, copySeconds: copies };
    const passes = rejectPasses(results);
    writeFileSync(opt.json, JSON.stringify({ run, preload: { ...preload, dataDir: preload.dataDir ?? null }, ...t, results, rejectOverAccept: passes[0]?.rate ?? null, rejectPasses: passes }, null, 2));
  }
  if (!opt.keep && !opt['reuse-topic']) {
    const admin = kafka.admin();
    await admin.connect();
    const all = [t.topic, `${t.topic}.dlq`, ...(t.rejectTopic ? [t.rejectTopic, `${t.rejectTopic}.dlq`] : [])];
    await admin.deleteTopics({ topics: all }).catch(() => undefined);
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
runBench(main, cleanup, log);
