/**
 * `npm run bench:audit-log-ingest`: how fast `tool-audit serve` ingests over HTTP with the audit
 * log builder running beside it, compared with AUDIT_LOG=off. **Target: packets/s with the log
 * ≥ 0.95 × without** (medians over the rounds).
 *
 *   npm run bench:audit-log-ingest -- [--calls 200000] [--batch 1000] [--clients 4] [--rounds 2] [--json FILE]
 *
 * N is `--calls` tool calls per run, sent with ~N/3 outputs (each of a successful call of the same
 * request, its content_hash the SHA-256 of its content) and ~N/20 declared dependencies, all
 * generated before the run's timing begins — the same shape and sizes for every run (one seed),
 * made afresh so that every run's calls are as old when they arrive. A run is a fresh `node
 * bin/tool-audit.mjs serve` (embedded ClickHouse, no Kafka) on a fresh temporary data directory;
 * `--clients` clients POST /v1/packets, a JSON array of about `--batch` packets each, back to
 * back; every answer must accept its whole batch. Figure: packets from the first POST to the last
 * answer, per second. Each round runs AUDIT_LOG=on and AUDIT_LOG=off, the first of the pair
 * alternating from round to round so that drift of the machine falls on both.
 *
 * Why not `bench:ingest -- --ingest-env AUDIT_LOG=off`: that bench measures `tool-audit ingest`,
 * the Kafka worker, which never runs the builder: both sides of that comparison are the same
 * process. The builder runs on the job lane of `serve` (and `analyze`), so that is what runs here.
 *
 * The builder by default leaves rows alone for a minute (AUDIT_LOG_GRACE_MS) and signs a head a
 * minute apart (AUDIT_LOG_HEAD_INTERVAL_MS): a run of under a minute would finish before it did
 * anything. Both are set to 1 s, so that it appends leaves and signs heads while the packets come
 * in — the cost measured is that of a builder keeping up, not of one waiting. After the last
 * answer, the bench waits for the dependency analyzer (in both configurations; it too runs on the
 * job lane, behind ingest) to have linked every call, by its /metrics, and reports when; in an
 * "on" run it follows the newest checkpoint (AUDIT_LOG_DIR/checkpoint, whose second line is the
 * tree size) until it holds every row the log must hold — the records sent plus the pairs and
 * violations the analyzer wrote — and reports how long after the last answer it first did
 * (catch-up), then waits until the tree stops growing and checks its size. The serve process's
 * peak resident memory (VmHWM) is reported for both configurations.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runBench } from '../bench-process.ts';
import { logProblems, parseMetrics } from '../history/history-serve.ts';
import { workload, type Workload } from './audit-log-ingest-workload.ts';
import { median } from '../stats.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const TARGET = 0.95;
const { values: opt } = parseArgs({
  options: {
    calls: { type: 'string', default: '200000' },
    batch: { type: 'string', default: '1000' },
    clients: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '2' },
    'catch-up-timeout-s': { type: 'string', default: '300' },
    json: { type: 'string' },
  },
});
const whole = (name: string, min: number): number => {
  const v = Number(opt[name as keyof typeof opt]);
  if (!(Number.isInteger(v) && v >= min)) throw new Error(`--${name} must be a whole number ≥ ${min}; got ${String(opt[name as keyof typeof opt])}`);
  return v;
};
const CALLS = whole('calls', 1);
const BATCH = whole('batch', 30);
const CLIENTS = whole('clients', 1);
const ROUNDS = whole('rounds', 1);
const CATCH_UP_TIMEOUT_MS = whole('catch-up-timeout-s', 1) * 1000;
/** The tree is taken as complete once it has not grown for this long (the builder runs every second). */
const SETTLE_MS = 3000;
const log = (s: string) => process.stderr.write(`[bench:audit-log-ingest] ${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res, rej) => s.once('error', rej).listen(0, '127.0.0.1', res));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((res) => s.close(() => res()));
  return port;
}

/** Peak resident memory of a process (VmHWM, MiB); 0 when it cannot be read. */
function peakRssMiB(pid: number | undefined): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Tree size of the newest checkpoint the builder signed (its note's second line), or 0 before the first. */
function checkpointSize(file: string): number {
  try {
    const size = Number(readFileSync(file, 'utf8').split('\n')[1]);
    return Number.isFinite(size) ? size : 0;
  } catch {
    return 0; // none signed yet
  }
}

interface Serve {
  child: ChildProcess;
  base: string;
  exited: Promise<number | null>;
  logFile: string;
}

let running: Serve | undefined;

async function startServe(dir: string, auditLog: 'on' | 'off'): Promise<Serve> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    TOOL_AUDIT_DATA_DIR: join(dir, 'data'),
    LOG_LEVEL: 'warn',
    // The builder runs only where the analyzer runs: on in both, so that only the log differs.
    ANALYZER_ENABLED: 'true',
    AUDIT_LOG: auditLog,
    AUDIT_LOG_GRACE_MS: '1000',
    AUDIT_LOG_HEAD_INTERVAL_MS: '1000',
    AUDIT_LOG_DIR: join(dir, 'audit-log'),
  };
  // Embedded ClickHouse, HTTP ingest only; no keys (loopback), no witnesses to wait on, a key made
  // in AUDIT_LOG_DIR: nothing of the caller's environment changes what is measured.
  for (const k of ['KAFKA_BROKERS', 'CLICKHOUSE_URL', 'TOOL_AUDIT_API_KEYS', 'AUDIT_LOG_SIGNING_KEY', 'AUDIT_LOG_WITNESS_URLS', 'AUDIT_LOG_ORIGIN']) delete env[k];
  const logFile = join(dir, 'serve.log');
  const logStream = createWriteStream(logFile);
  const child = spawn(process.execPath, [join(ROOT, 'bin/tool-audit.mjs'), 'serve'], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(logStream);
  child.stderr?.pipe(logStream);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const s: Serve = { child, base: `http://127.0.0.1:${port}`, exited, logFile };
  running = s;
  const t0 = performance.now();
  for (;;) {
    if (child.exitCode !== null || child.signalCode) throw new Error(`serve exited (${child.exitCode ?? child.signalCode}) before /readyz answered; log: ${readFileSync(logFile, 'utf8').slice(-2000)}`);
    try {
      const r = await fetch(`${s.base}/readyz`, { signal: AbortSignal.timeout(5000) });
      await r.arrayBuffer();
      if (r.status === 200) return s;
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > 180_000) throw new Error('serve not ready within 180 s');
    await sleep(100);
  }
}

/** SIGTERM, then the exit code (SIGKILL after 120 s: reported as null). */
async function stopServe(s: Serve): Promise<{ code: number | null; stopS: number }> {
  const t0 = performance.now();
  s.child.kill('SIGTERM');
  const t = setTimeout(() => s.child.kill('SIGKILL'), 120_000);
  const code = await s.exited;
  clearTimeout(t);
  running = undefined;
  return { code, stopS: (performance.now() - t0) / 1000 };
}

/** The analyzer by serve's /metrics: the dependency pairs and violations it wrote (leaves too), and how far behind ingest it is. */
async function analyzerState(base: string): Promise<{ pairs: number; violations: number; lagS: number }> {
  const m = parseMetrics(await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) })).text());
  let violations = 0;
  for (const [k, v] of m) if (k.startsWith('tool_audit_violations_total')) violations += v;
  return { pairs: m.get('tool_audit_analyzer_pairs_total') ?? 0, violations, lagS: m.get('tool_audit_analyzer_lag_seconds') ?? Number.NaN };
}

/** Sends every body with `clients` clients back to back; seconds from the first POST to the last answer. */
async function send(base: string, w: Workload): Promise<{ seconds: number; problems: string[] }> {
  const problems: string[] = [];
  let next = 0;
  const client = async () => {
    for (let i = next++; i < w.bodies.length; i = next++) {
      const { body, packets } = w.bodies[i] as Workload['bodies'][number];
      const res = await fetch(`${base}/v1/packets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(300_000) });
      const text = await res.text();
      if (res.status !== 200) {
        problems.push(`batch ${i}: HTTP ${res.status} ${text.slice(0, 300)}`);
        continue;
      }
      const a = JSON.parse(text) as { accepted: number; rejected: number; duplicates: number; results: Array<{ status: string; reason?: { code: string; message: string } }> };
      if (a.accepted !== packets || a.rejected !== 0 || a.duplicates !== 0) {
        const first = a.results.find((x) => x.status !== 'accepted');
        problems.push(`batch ${i}: ${a.accepted}/${packets} accepted, ${a.rejected} rejected, ${a.duplicates} duplicates; first: ${JSON.stringify(first)}`);
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, client));
  return { seconds: (performance.now() - t0) / 1000, problems };
}

/** One run's figures. */
interface Run {
  round: number;
  config: 'on' | 'off';
  seconds: number;
  packetsPerSecond: number;
  /** Leaves in the newest checkpoint at the last answer (on). */
  treeAtLastAnswer: number | null;
  /** Seconds from the last answer until the dependency analyzer was seen idle, every call linked (null: not within the timeout). */
  analyzerDoneS: number | null;
  /** Seconds from the last answer until a checkpoint held every row the log must hold, the analyzer's included (on; null: not within the timeout). */
  catchUpS: number | null;
  /** Tree size once it stopped growing, and the rows it should hold (records sent + analyzer pairs + violations). */
  finalTree: number | null;
  expectedLeaves: number | null;
  analyzerPairs: number;
  violations: number;
  peakRssMiB: number;
  exitCode: number | null;
  stopS: number;
  rejections: string[];
  serveLog: { warn: number; error: number; fatal: number; samples: string[] };
}

async function oneRun(root: string, round: number, config: 'on' | 'off', w: Workload): Promise<Run> {
  const dir = join(root, `round-${round}-${config}`);
  mkdirSync(dir);
  const s = await startServe(dir, config);
  const records = w.calls + w.outputs + w.dependencies;
  const checkpoint = join(dir, 'audit-log', 'checkpoint');
  const sent = await send(s.base, w);
  const ended = performance.now();
  for (const p of sent.problems.slice(0, 5)) log(`  ${p}`);
  const treeAtLastAnswer = config === 'on' ? checkpointSize(checkpoint) : null;
  // The analyzer runs beside the builder in both configurations and is behind ingest at the last
  // answer (the job lane yields to ingest): the rows it still writes are leaves the log must hold
  // too. So: every 500 ms its counters, until it is done (the rows to hold are then final); every
  // 100 ms the checkpoint (on), each growth with its time, until it holds them all — caught up
  // when it first did, which may be before the analyzer was seen done — and then until it has not
  // grown for SETTLE_MS (its final size).
  let analyzer = await analyzerState(s.base);
  let analyzerDoneS: number | null = null;
  let zeroSince: number | null = null;
  let catchUpS: number | null = null;
  let size = treeAtLastAnswer ?? 0;
  let changedAt = performance.now();
  const growth: Array<{ at: number; size: number }> = [{ at: ended, size }];
  let scrapedAt = performance.now();
  for (;;) {
    const now = performance.now();
    if (analyzerDoneS === null && now - scrapedAt >= 500) {
      const next = await analyzerState(s.base);
      // Done: lag 0 on two scrapes in a row with no pair written between them (a run may be
      // writing as the first is taken), from the first of them. The lag is set as a run begins,
      // so this is up to a run's interval (1 s) after the analyzer's last write.
      if (next.lagS !== 0 || next.pairs !== analyzer.pairs) zeroSince = null;
      else if (zeroSince === null) zeroSince = now;
      else analyzerDoneS = (zeroSince - ended) / 1000;
      analyzer = next;
      scrapedAt = now;
    }
    if (config === 'on') {
      const next = checkpointSize(checkpoint);
      if (next !== size) {
        size = next;
        changedAt = now;
        growth.push({ at: now, size });
      }
      const target = records + analyzer.pairs + analyzer.violations;
      const reached = growth.find((g) => g.size >= target);
      if (catchUpS === null && analyzerDoneS !== null && reached) catchUpS = (reached.at - ended) / 1000;
    }
    if (analyzerDoneS !== null && (config === 'off' || (catchUpS !== null && now - changedAt >= SETTLE_MS))) break;
    if (now - ended > CATCH_UP_TIMEOUT_MS) {
      log(`  not done within ${CATCH_UP_TIMEOUT_MS / 1000} s: analyzer ${analyzerDoneS === null ? 'still working' : 'done'}, tree ${size}, rows to hold ${records + analyzer.pairs + analyzer.violations}`);
      break;
    }
    await sleep(100);
  }
  analyzer = await analyzerState(s.base);
  const expected = config === 'on' ? records + analyzer.pairs + analyzer.violations : null;
  const finalTree = config === 'on' ? size : null;
  const peak = peakRssMiB(s.child.pid);
  const stopped = await stopServe(s);
  const serveLog = logProblems(s.logFile);
  rmSync(dir, { recursive: true, force: true });
  return {
    round,
    config,
    seconds: sent.seconds,
    packetsPerSecond: w.packets / sent.seconds,
    treeAtLastAnswer,
    catchUpS,
    finalTree,
    expectedLeaves: expected,
    analyzerDoneS,
    analyzerPairs: analyzer.pairs,
    violations: analyzer.violations,
    peakRssMiB: peak,
    exitCode: stopped.code,
    stopS: stopped.stopS,
    rejections: sent.problems,
    serveLog,
  };
}

let root: string | undefined;

async function main(): Promise<void> {
  let t = performance.now();
  let pending: Workload | undefined = workload(CALLS, BATCH);
  // The shape of every run's workload (the bodies themselves are let go after their run).
  const w = { calls: pending.calls, outputs: pending.outputs, dependencies: pending.dependencies, packets: pending.packets, requests: pending.bodies.length, bytes: pending.bytes };
  const nLine = `N = ${w.calls.toLocaleString('en')} calls + ${w.outputs.toLocaleString('en')} outputs + ${w.dependencies.toLocaleString('en')} dependencies = ${w.packets.toLocaleString('en')} packets in ${w.requests} requests (${(w.bytes / 2 ** 20).toFixed(0)} MiB), ${CLIENTS} clients`;
  log(`${nLine}; generated in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  root = mkdtempSync(join(tmpdir(), 'tool-audit-audit-log-ingest-'));
  const runs: Run[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const order: Array<'on' | 'off'> = round % 2 === 1 ? ['on', 'off'] : ['off', 'on'];
    for (const config of order) {
      // Made afresh for each run but the first (same seed: the same packets but ids and times).
      const wl = pending ?? workload(CALLS, BATCH);
      pending = undefined;
      t = performance.now();
      const r = await oneRun(root, round, config, wl);
      runs.push(r);
      log(
        `round ${round} AUDIT_LOG=${config}: ${Math.round(r.packetsPerSecond).toLocaleString('en')} packets/s (${r.seconds.toFixed(1)} s)` +
          (config === 'on' ? `, tree ${r.treeAtLastAnswer} at the last answer, caught up ${r.catchUpS?.toFixed(1) ?? '—'} s later, final ${r.finalTree} of ${r.expectedLeaves}` : '') +
          `, analyzer done ${r.analyzerDoneS?.toFixed(1) ?? '—'} s later (${r.analyzerPairs} pairs, ${r.violations} violations)` +
          `, peak RSS ${r.peakRssMiB.toFixed(0)} MiB, exit ${r.exitCode}, serve log ${r.serveLog.warn} warn / ${r.serveLog.error} error; ${((performance.now() - t) / 1000).toFixed(0)} s in all`,
      );
    }
  }
  const on = median(runs.filter((r) => r.config === 'on').map((r) => r.packetsPerSecond));
  const off = median(runs.filter((r) => r.config === 'off').map((r) => r.packetsPerSecond));
  const ratio = on / off;
  const odd = runs.flatMap((r) => [
    ...(r.exitCode !== 0 ? [`round ${r.round} ${r.config}: serve exited with ${r.exitCode}`] : []),
    ...(r.rejections.length ? [`round ${r.round} ${r.config}: ${r.rejections.length} requests not wholly accepted (${r.rejections[0]})`] : []),
    ...(r.config === 'on' && r.catchUpS === null ? [`round ${r.round} on: the log never covered the ${r.expectedLeaves} rows (tree ${r.finalTree})`] : []),
    ...(r.config === 'on' && r.finalTree !== r.expectedLeaves ? [`round ${r.round} on: final tree ${r.finalTree} ≠ rows to hold ${r.expectedLeaves}`] : []),
    ...(r.serveLog.error + r.serveLog.fatal > 0 ? [`round ${r.round} ${r.config}: serve logged ${r.serveLog.error} errors, ${r.serveLog.fatal} fatal: ${r.serveLog.samples.join(' | ')}`] : []),
  ]);
  const pad = (s: string, n: number) => s.padStart(n);
  process.stdout.write(
    [
      `bench:audit-log-ingest — ${nLine}, --batch ${BATCH}`,
      `serve with AUDIT_LOG_GRACE_MS=1000, AUDIT_LOG_HEAD_INTERVAL_MS=1000, embedded ClickHouse, HTTP ingest`,
      `seconds after the last answer until — analyzer s: the dependency analyzer was seen idle (lag 0, no new pair; up to ~1 s late); catch-up s: a signed checkpoint held every row (sent + the analyzer's); tree@end: the checkpoint's size at the last answer`,
      '',
      `round  config  packets/s  ingest s  analyzer s  tree@end  catch-up s  final tree  peak RSS MiB`,
      ...runs.map(
        (r) =>
          `${pad(String(r.round), 5)}  ${pad(r.config, 6)}  ${pad(Math.round(r.packetsPerSecond).toLocaleString('en'), 9)}  ${pad(r.seconds.toFixed(1), 8)}  ${pad(r.analyzerDoneS?.toFixed(1) ?? '—', 10)}  ${pad(r.treeAtLastAnswer?.toLocaleString('en') ?? '—', 8)}  ${pad(r.catchUpS?.toFixed(1) ?? '—', 10)}  ${pad(r.finalTree?.toLocaleString('en') ?? '—', 10)}  ${pad(r.peakRssMiB.toFixed(0), 12)}`,
      ),
      '',
      `median packets/s: on ${Math.round(on).toLocaleString('en')}, off ${Math.round(off).toLocaleString('en')}; on/off = ${ratio.toFixed(3)} (target ≥ ${TARGET}: ${ratio >= TARGET ? 'met' : 'NOT met'})`,
      ...(odd.length ? ['', 'odd:', ...odd.map((o) => `  ${o}`)] : []),
      '',
    ].join('\n'),
  );
  if (opt.json) {
    writeFileSync(opt.json, JSON.stringify({ n: w, batch: BATCH, clients: CLIENTS, rounds: ROUNDS, runs, medianPacketsPerSecond: { on, off }, ratio, target: TARGET, met: ratio >= TARGET, odd }, null, 2));
  }
  if (odd.length) process.exitCode = 1;
}

runBench(
  main,
  () => {
    running?.child.kill('SIGKILL');
    if (root) rmSync(root, { recursive: true, force: true });
  },
  log,
);
