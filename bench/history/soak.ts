/**
 * `npm run bench:soak`: reads, ingest and jobs side by side on the embedded engine's lanes for
 * several minutes, with `serve` SIGKILLed and restarted along the way. A client reads
 * the task list, the tools table, a task view and the failed calls back to back; a producer keeps
 * packets coming; the analyzer, auditor and dedup indexer run in serve. It passes when nothing
 * aborted (every exit of serve was one of our kills, or 0 at the end), no read was answered with
 * an error (a refused connection or a 503 while serve starts is not one), and the crash oracle
 * holds: every valid packet stored exactly once (count() = uniqExact(key), without FINAL), every
 * invalid one in quarantine once. Exit status 1 otherwise.
 *
 *   npm run bench:soak -- [--minutes 5] [--packets 400000] [--kill-every-s 40] [--json FILE]
 *
 * Kafka: KAFKA_BROKERS when set, else a private broker (scripts/kafka-services.sh, port BENCH_KAFKA_PORT or 29292).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClickHouse } from '../../platform/clickhouse/client.ts';
import { brokers as testBrokers, createTopics, eventually, groupLag, testKafka, uniqueNames } from '../../test/helpers/kafka.ts';
import { mixedStream, type GenMessage } from '../../test/helpers/workload.ts';
import { runBench } from '../bench-process.ts';
import { quantile } from '../stats.ts';
import { HISTORY_KEY, logProblems, startServe, stopServe, type ServeRun } from './history-serve.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const { values: opt } = parseArgs({
  options: { minutes: { type: 'string', default: '5' }, packets: { type: 'string', default: '400000' }, 'kill-every-s': { type: 'string', default: '40' }, json: { type: 'string' }, keep: { type: 'boolean', default: false } },
});
const log = (s: string) => process.stderr.write(`[bench:soak] ${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const brokerPort = process.env.BENCH_KAFKA_PORT ?? '29292';
const scriptEnv = { ...process.env, TOOL_AUDIT_SERVICES_DIR: join(tmpdir(), `tool-audit-bench-kafka-${brokerPort}`), TOOL_AUDIT_KAFKA_PORT: brokerPort };
let startedBroker = false;
let serve: ServeRun | undefined;
const work = mkdtempSync(join(tmpdir(), 'tool-audit-soak-'));

function broker(): string {
  if (process.env.KAFKA_BROKERS) return process.env.KAFKA_BROKERS;
  const out = execFileSync('bash', ['scripts/kafka-services.sh', 'start'], { cwd: ROOT, env: scriptEnv, stdio: ['ignore', 'pipe', 'inherit'] }).toString();
  startedBroker = true;
  const line = out.split('\n').find((l) => l.startsWith('KAFKA_BROKERS='));
  if (!line) throw new Error(`kafka-services.sh printed no KAFKA_BROKERS line: ${out}`);
  return line.slice('KAFKA_BROKERS='.length);
}

/** What the reader saw, per route: latencies of answers, and every answer that was an error. */
interface Reads {
  ms: Record<string, number[]>;
  errors: string[];
  down: number;
  starting: number;
}

/** Reads back to back until `until()`; the serve of the moment is `current()`. */
async function reader(current: () => ServeRun | undefined, tasks: string[], until: () => boolean): Promise<Reads> {
  const r: Reads = { ms: {}, errors: [], down: 0, starting: 0 };
  const w = 'from=2026-10-31T00:00:00Z&to=2026-11-03T00:00:00Z';
  const routes: Array<[string, () => string]> = [
    ['task list', () => `/v1/tasks?limit=50&${w}`],
    ['tools table', () => `/v1/tools?${w}`],
    ['task view', () => `/v1/tasks/${encodeURIComponent(tasks[Math.floor(Math.random() * tasks.length)] ?? 'x')}?${w}`],
    ['failed calls', () => `/v1/calls/failed?limit=50&${w}`],
  ];
  for (let i = 0; !until(); i++) {
    const s = current();
    const [name, path] = routes[i % routes.length] as [string, () => string];
    if (!s) {
      await sleep(100);
      continue;
    }
    const t0 = performance.now();
    try {
      const res = await fetch(`${s.base}${path()}`, { headers: { authorization: `Bearer ${HISTORY_KEY}` }, signal: AbortSignal.timeout(30_000) });
      const body = await res.text();
      if (res.status === 200) (r.ms[name] ??= []).push(performance.now() - t0);
      else if (res.status === 503 && /STARTING|starting/.test(body)) r.starting++;
      else if (r.errors.length < 50) r.errors.push(`${name} → ${res.status} ${body.slice(0, 200)}`);
    } catch {
      r.down++; // serve was killed under this request, or is not listening yet
      await sleep(100);
    }
  }
  return r;
}

async function main(): Promise<void> {
  const minutes = Number(opt.minutes);
  const packets = Number(opt.packets);
  const killEveryMs = Number(opt['kill-every-s']) * 1000;
  process.env.KAFKA_BROKERS = broker();
  const kafka = testKafka('tool-audit-soak');
  const names = uniqueNames('soak');
  await createTopics(kafka, [
    { topic: names.topic, partitions: 6 },
    { topic: `${names.topic}.dlq`, partitions: 1 },
  ]);
  const msgs: GenMessage[] = mixedStream(packets, { invalidEvery: 97, tasks: 1000 });
  const tasks = [...new Set(msgs.map((m) => m.key))];
  const dataDir = join(work, 'data');
  const endAt = performance.now() + minutes * 60_000;
  const done = () => performance.now() >= endAt;
  log(`${packets} packets over ${minutes} min to ${names.topic} (${testBrokers().join(',')}); serve killed every ~${killEveryMs / 1000} s; data in ${dataDir}`);

  // The producer spreads the packets over 80 % of the run, so ingest works throughout.
  const producer = kafka.producer({ idempotent: false });
  await producer.connect();
  const producing = (async () => {
    const chunk = 2000;
    const perChunkMs = (minutes * 60_000 * 0.8) / Math.ceil(packets / chunk);
    for (let i = 0; i < msgs.length; i += chunk) {
      const t0 = performance.now();
      await producer.send({ topic: names.topic, acks: -1, messages: msgs.slice(i, i + chunk) });
      await sleep(Math.max(0, perChunkMs - (performance.now() - t0)));
    }
    await producer.disconnect();
  })();

  const start = () => startServe({ dataDir, brokers: testBrokers().join(','), topic: names.topic, group: names.groupId, readyTimeoutMs: 300_000, log });
  const unexpectedExits: string[] = [];
  const logs: string[] = [];
  let kills = 0;
  serve = await start();
  const reading = reader(() => serve, tasks, done);
  while (!done()) {
    await sleep(killEveryMs * (0.5 + Math.random()));
    if (done()) break;
    const s = serve as ServeRun;
    if (s.child.exitCode !== null || s.child.signalCode) unexpectedExits.push(`serve exited by itself (${s.child.exitCode ?? s.child.signalCode}); log ${s.logFile}`);
    serve = undefined;
    s.child.kill('SIGKILL');
    await s.exited;
    logs.push(s.logFile);
    kills++;
    log(`kill ${kills} at ${Math.round((minutes * 60_000 - (endAt - performance.now())) / 1000)} s`);
    serve = await start();
  }
  const reads = await reading;
  await producing;
  const admin = kafka.admin();
  await admin.connect();
  await eventually(async () => (await groupLag(admin, names.groupId, names.topic)) === 0, 600_000, 'ingest to catch up');
  await admin.disconnect();
  const last = serve as ServeRun;
  const jobs = (await (await fetch(`${last.base}/readyz`, { headers: { authorization: `Bearer ${HISTORY_KEY}` } })).json()) as { jobs?: Record<string, { ok: boolean; detail?: string }> };
  const stopped = await stopServe(last);
  serve = undefined;
  logs.push(last.logFile);
  if (stopped.code !== 0 || stopped.killed) unexpectedExits.push(`the last serve stopped with ${stopped.code} (killed: ${stopped.killed})`);

  const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: 'tool_audit', dataDir });
  const one = async (sql: string) => Object.values(((await (await ch.query({ query: sql, format: 'JSONEachRow' })).json()) as Array<Record<string, string>>)[0] ?? {}).map(Number);
  const [inv, invU] = await one('SELECT count(), uniqExact(call_id) FROM tool_audit.tool_invocations');
  const [out, outU] = await one('SELECT count(), uniqExact(output_id) FROM tool_audit.tool_outputs');
  const [q, qU] = await one('SELECT count(), uniqExact(source_key) FROM tool_audit.quarantine');
  await ch.close();
  const want = (k: GenMessage['expect']) => msgs.filter((m) => m.expect === k).length;
  const oracle = { invocations: [inv, invU, want('invocation')], outputs: [out, outU, want('output')], quarantine: [q, qU, want('quarantine')] };
  const problems = logs.map(logProblems);
  const aborts = problems.flatMap((p) => p.samples).filter((s) => /abort|Logical error|terminate called|Segmentation|heap limit/i.test(s));
  const failingJobs = Object.entries(jobs.jobs ?? {}).filter(([, j]) => !j.ok);
  const lat = Object.fromEntries(Object.entries(reads.ms).map(([k, v]) => [k, { n: v.length, p50: Math.round(quantile(v, 0.5)), p95: Math.round(quantile(v, 0.95)), p99: Math.round(quantile(v, 0.99)) }]));
  const report = { minutes, packets, kills, oracle, reads: { latencyMs: lat, errors: reads.errors, refusedWhileDown: reads.down, startingAnswers: reads.starting }, unexpectedExits, aborts, failingJobs };
  log(JSON.stringify(report, null, 1));
  if (opt.json) writeFileSync(opt.json, JSON.stringify(report, null, 2));
  const held = Object.values(oracle).every(([c, u, w]) => c === u && c === w);
  const pass = held && reads.errors.length === 0 && unexpectedExits.length === 0 && aborts.length === 0 && failingJobs.length === 0 && kills > 0;
  log(`soak: ${pass ? 'PASS' : 'FAIL'}`);
  if (!pass) process.exitCode = 1;
}

runBench(
  main,
  () => {
    serve?.child.kill('SIGKILL');
    if (startedBroker && !opt.keep) execFileSync('bash', ['scripts/kafka-services.sh', 'stop'], { cwd: ROOT, env: scriptEnv, stdio: ['ignore', 'inherit', 'inherit'] });
    if (!opt.keep) rmSync(work, { recursive: true, force: true });
  },
  log,
);
