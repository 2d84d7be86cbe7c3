/**
 * `npm run bench:history`: `tool-audit serve` started on a long history its jobs have
 * never analyzed (a day of `analyze` not running, a backfill), with Kafka ingest at full speed and
 * a dashboard reading at the same time.
 *
 *  build    builds or reuses N calls with realistic sources and defects (bench/history/history-data.ts) in
 *           <data-dir>/base; each serve run gets a fresh copy (<data-dir>/run).
 *  startup  spawn → first 200 of /healthz and /readyz, peak RSS (serve without Kafka).
 *  load     serve with Kafka on the copy: p50/p95/p99 of four read requests over --minutes while the
 *           jobs catch up and the topic is ingested; then waits (≤ --max-wait-minutes) for lag 0 and
 *           catch-up; reads the jobs' watermark writes from the copy.
 *  ingest   the same serve run's spawn → consumer lag 0, and the same topic into an empty data
 *           directory (the baseline) for the ratio full / empty.
 *
 *   npm run bench:history -- [--invocations 10000000] [--tasks N/100] [--days 21] [--data-dir ./.bench-data/history]
 *        [--minutes 20] [--packets 150000] [--only build|startup|load|ingest[,…]] [--json FILE] [--max-wait-minutes 60]
 *        [--copy full|link] [--optimize true|false]   (link: the run's copy hard-links the base's parts: a history too large to hold twice)
 *
 * Kafka: KAFKA_BROKERS when set, else a private broker (scripts/kafka-services.sh, port BENCH_KAFKA_PORT or 29192).
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { groupLag } from '../../test/helpers/kafka.ts';
import { topics } from '../ingest/ingest-topics.ts';
import { copyHistory, emptyDataDir, ensureHistory, historyShapeOf, historyShapeOptions, inspectRun } from './history-db.ts';
import type { HistoryMeta } from './history-data.ts';
import { loadSince, runLoad, type LoadSample } from './history-load.ts';
import { catchUp, report, type RunFigures } from './history-report.ts';
import { HISTORY_KEY, logProblems, startServe, stopServe } from './history-serve.ts';
import { runBench } from '../bench-process.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const { values: opt } = parseArgs({
  options: {
    ...historyShapeOptions('10000000'),
    minutes: { type: 'string', default: '20' },
    packets: { type: 'string', default: '150000' },
    partitions: { type: 'string', default: '6' },
    only: { type: 'string', default: 'build,startup,load,ingest' },
    json: { type: 'string' },
    'max-wait-minutes': { type: 'string', default: '60' },
    'caught-up-lag-s': { type: 'string', default: '60' },
    keep: { type: 'boolean', default: false },
    copy: { type: 'string', default: 'full' },
  },
});
const shape = historyShapeOf(opt);
const phases = new Set((opt.only as string).split(',').map((x) => x.trim()));
const MAX_WAIT_MS = Number(opt['max-wait-minutes']) * 60_000;
const log = (s: string) => process.stderr.write(`[bench:history] ${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// The workload's packets per tool_call (outputs, redeliveries, invalid ones), measured: 1.93.
const PACKETS_PER_CALL = 1.93;

const brokerPort = process.env.BENCH_KAFKA_PORT ?? '29192';
const servicesDir = join(tmpdir(), `tool-audit-bench-kafka-${brokerPort}`);
const scriptEnv = { ...process.env, TOOL_AUDIT_SERVICES_DIR: servicesDir, TOOL_AUDIT_KAFKA_PORT: brokerPort };
let startedBroker = false;
let liveServe: ChildProcess | undefined;

function startBroker(): string {
  if (process.env.KAFKA_BROKERS) return process.env.KAFKA_BROKERS;
  log(`starting a private Kafka broker (${servicesDir}, port ${brokerPort})`);
  const out = execFileSync('bash', ['scripts/kafka-services.sh', 'start'], { cwd: ROOT, env: scriptEnv, stdio: ['ignore', 'pipe', 'inherit'] }).toString();
  startedBroker = true;
  const line = out.split('\n').find((l) => l.startsWith('KAFKA_BROKERS='));
  if (!line) throw new Error(`kafka-services.sh printed no KAFKA_BROKERS line: ${out}`);
  return line.slice('KAFKA_BROKERS='.length);
}

function stopBroker(): void {
  if (!startedBroker || opt.keep) return;
  startedBroker = false;
  execFileSync('bash', ['scripts/kafka-services.sh', 'stop'], { cwd: ROOT, env: scriptEnv, stdio: ['ignore', 'inherit', 'inherit'] });
}

interface Ingest {
  brokers: string;
  topic: string;
  admin: Admin;
}

/**
 * One serve run: start-up, then (with `ingest`) group lag polled every 500 ms, (with `load`) the
 * read load for --minutes, then the wait for lag 0 and catch-up, the stop, and what the run left.
 */
async function serveRun(name: string, dataDir: string, meta: HistoryMeta, ing: Ingest | undefined, o: { load: boolean; waitCatchUp: boolean }): Promise<RunFigures> {
  const group = `bench-history-${randomBytes(4).toString('hex')}`;
  log(`${name}: serve on ${dataDir}${ing ? `, topic ${ing.topic}, group ${group}` : ', no Kafka'}`);
  let stopping = false;
  let lag: number | null = null;
  let lag0S: number | null = null;
  let lagPoll: Promise<void> = Promise.resolve();
  // Polled from spawn, not from /readyz: ingest does not wait for the key filter, so a
  // cold start may be done ingesting before it is ready.
  const pollLag = (spawnAt: number) => {
    lagPoll = (async () => {
      while (ing && !stopping && lag0S === null) {
        try {
          lag = await groupLag(ing.admin, group, ing.topic);
          if (lag === 0) lag0S = (performance.now() - spawnAt) / 1000;
        } catch {
          // the group does not exist yet
        }
        await sleep(500);
      }
    })();
  };
  const run = await startServe({ dataDir, brokers: ing?.brokers, topic: ing?.topic, group, readyTimeoutMs: MAX_WAIT_MS, log, onSpawn: pollLag });
  liveServe = run.child;
  log(`${name}: /healthz ${run.healthzS?.toFixed(1)} s, /readyz ${run.readyzS?.toFixed(1)} s`);
  let exitedEarly = false;
  void run.exited.then(() => (exitedEarly = !stopping));
  let load: RunFigures['load'] = [];
  const samples: LoadSample[] = [];
  let loadSeconds = 0;
  let lagAtLoadEnd: number | null = null;
  let atLoadEnd: Record<string, number> | undefined;
  if (o.load && run.readyzS !== null) {
    const t0 = performance.now();
    log(`${name}: read load for ${opt.minutes} min`);
    load = await runLoad(run.base, HISTORY_KEY, meta.taskIds, t0 + Number(opt.minutes) * 60_000, () => exitedEarly, (x) => samples.push(x));
    loadSeconds = (performance.now() - t0) / 1000;
    lagAtLoadEnd = lag;
    atLoadEnd = Object.fromEntries(run.metrics());
  }
  // Caught up, as far as /metrics tells while serve runs: the analyzer's lag (set as each of its
  // runs starts) is small, and the auditor has recorded the violations the defects imply.
  const m = () => run.metrics();
  const caughtUp = () => {
    const a = m().get('tool_audit_analyzer_lag_seconds');
    const v = (inv: string) => m().get(`tool_audit_violations_total{invariant="${inv}"}`) ?? 0;
    return a !== undefined && a <= Number(opt['caught-up-lag-s']) && v('I11') >= meta.expected.i11 * 0.99 && v('I4') >= meta.expected.i4 && v('M2') >= meta.expected.m2;
  };
  const w0 = performance.now();
  let lastLog = w0;
  while (!exitedEarly && performance.now() - run.spawnAt < MAX_WAIT_MS) {
    if ((!ing || lag0S !== null) && (!o.waitCatchUp || caughtUp())) break;
    if (performance.now() - lastLog > 30_000) {
      lastLog = performance.now();
      const v = [...m()].filter(([k]) => k.startsWith('tool_audit_violations_total')).map(([k, x]) => `${k.slice(39, -2)} ${x}`);
      log(`${name}: ${((performance.now() - run.spawnAt) / 1000).toFixed(0)} s, group lag ${lag ?? '?'}, analyzer lag ${m().get('tool_audit_analyzer_lag_seconds') ?? '?'} s, violations ${v.join(', ') || 'none'}`);
    }
    await sleep(1000);
  }
  const waitedS = (performance.now() - w0) / 1000;
  stopping = true;
  await lagPoll;
  const peakRssMiB = run.peakRssMiB();
  log(`${name}: stopping serve`);
  const stop = await stopServe(run);
  liveServe = undefined;
  const state = await inspectRun(dataDir, log).catch((err: unknown) => {
    log(`${name}: reading the data directory failed: ${(err as Error).message}`);
    return undefined;
  });
  // Catch-up is of the history's backlog: the baseline has none.
  const cu = state && o.waitCatchUp ? catchUp(state, meta.historyEndMs, run.spawnWallMs) : { catchUpS: {}, watermarkWrites: {} };
  // The cache simulation reads the dedup index once it is close behind: the reads after it caught up.
  const indexS = (cu.catchUpS as Record<string, number | null>)['dedup-index'];
  const loadAfterIndex = indexS === null || indexS === undefined ? undefined : { afterS: indexS, load: loadSince(samples, run.spawnWallMs + indexS * 1000) };
  return {
    loadAfterIndex,
    name,
    dataDir,
    healthzS: run.healthzS,
    readyzS: run.readyzS,
    peakRssMiB,
    ingestLag0S: lag0S,
    lagAtLoadEnd,
    ...cu,
    load,
    loadSeconds,
    violations: state?.violations ?? {},
    rows: state?.rows ?? null,
    stop,
    exitedEarly,
    log: { file: run.logFile, ...logProblems(run.logFile) },
    waitedS,
    ...(atLoadEnd ? { atLoadEnd } : {}),
  };
}

async function main(): Promise<void> {
  const dir = opt['data-dir'] as string;
  mkdirSync(dir, { recursive: true });
  const meta = await ensureHistory(dir, shape, log);
  const runs: RunFigures[] = [];
  const notes: string[] = [];
  let packets: { topic: string; messages: number; toolCalls: number } | null = null;
  // Start-up twice on one copy: cold (no key filter snapshot: every stored key is read, as on the
  // first start after an upgrade) and warm (the snapshot the cold run wrote, as on any later start).
  // The load run then starts warm on the same copy, as a deployment that has run before does.
  let copy: ReturnType<typeof copyHistory> | undefined;
  if (phases.has('startup')) {
    copy = copyHistory(dir, opt.copy === 'link' ? 'link' : 'full');
    notes.push(`copy of the history for the runs: ${(copy.bytes / 1e9).toFixed(2)} GB in ${copy.copySeconds.toFixed(1)} s`);
    runs.push(await serveRun('history, no Kafka, cold (no snapshot)', copy.dataDir, meta, undefined, { load: false, waitCatchUp: false }));
    runs.push(await serveRun('history, no Kafka, warm (snapshot)', copy.dataDir, meta, undefined, { load: false, waitCatchUp: false }));
    notes.push('the cold and warm start-up runs let the jobs run for their few seconds: the load run catches up from slightly further on');
  }
  if (phases.has('load') || phases.has('ingest')) {
    const brokers = startBroker();
    const kafka = new Kafka({ clientId: 'bench-history', brokers: brokers.split(','), logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 200 } });
    const stateDir = join(tmpdir(), 'tool-audit-bench');
    mkdirSync(stateDir, { recursive: true });
    // The whole topic is in the broker before serve starts: ingest runs at full speed from spawn.
    const t = await topics({ kafka, partitions: Number(opt.partitions), toolCalls: Math.round(Number(opt.packets) / PACKETS_PER_CALL), reuseTopic: undefined, rejectShare: undefined, stateDir, log });
    packets = { topic: t.topic, messages: t.counts.messages, toolCalls: t.counts.toolCalls };
    const admin = kafka.admin();
    await admin.connect();
    const ing = { brokers, topic: t.topic, admin };
    try {
      if (!copy) {
        copy = copyHistory(dir, opt.copy === 'link' ? 'link' : 'full');
        notes.push(`copy of the history for the run: ${(copy.bytes / 1e9).toFixed(2)} GB in ${copy.copySeconds.toFixed(1)} s`);
      }
      runs.push(await serveRun('history + Kafka', copy.dataDir, meta, ing, { load: phases.has('load'), waitCatchUp: true }));
      if (phases.has('ingest')) runs.push(await serveRun('baseline (empty db) + Kafka', emptyDataDir(dir), meta, ing, { load: false, waitCatchUp: false }));
    } finally {
      if (!opt.keep) await admin.deleteTopics({ topics: [t.topic, `${t.topic}.dlq`] }).catch(() => undefined);
      await admin.disconnect();
    }
  }
  notes.push(
    'catch-up = seconds from spawn to the wall time (analyzer_progress.updated_at) of the job\'s first watermark write ≥ the history\'s newest ingested_at; ' +
      `the run stops once group lag is 0 and /metrics shows the analyzer lag ≤ ${opt['caught-up-lag-s']} s and the expected I11/I4/M2 counts, or after ${opt['max-wait-minutes']} min from spawn`,
  );
  const text = report(meta, packets, runs, notes);
  process.stdout.write(`\n${text}\n`);
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ N: meta.rows.invocations, meta, packets, runs, args: opt }, null, 2));
  const problems = runs.filter((r) => r.exitedEarly || r.stop.killed || r.readyzS === null);
  if (problems.length) process.exitCode = 1;
}

const cleanup = () => {
  // A serve left running would hold the data directory (and the port) after we are gone.
  liveServe?.kill('SIGKILL');
  try {
    stopBroker();
  } catch (err) {
    log(`stopping the broker failed: ${(err as Error).message}`);
  }
};
runBench(main, cleanup, log);
