/**
 * One `tool-audit serve` of `npm run bench:history`, run as a user runs it (`node
 * bin/tool-audit.mjs serve`, a child process): its start-up probes, its resident memory and its
 * /metrics, watched from outside while it runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;
/** The key of every bench:history request (TOOL_AUDIT_API_KEYS: "<key>:<scopes>"). */
export const HISTORY_KEY = 'bench-history-key-0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A running serve and what is watched of it. */
export interface ServeRun {
  child: ChildProcess;
  port: number;
  base: string;
  /** performance.now() and Date.now() at spawn. */
  spawnAt: number;
  spawnWallMs: number;
  /** Seconds from spawn to the first 200 of /healthz and of /readyz (polled every 100 ms); null: never. */
  healthzS: number | null;
  readyzS: number | null;
  /** Peak of the summed VmRSS of serve and its descendants, sampled every 500 ms (MiB). */
  peakRssMiB(): number;
  /** The summed VmRSS of serve and its descendants now (MiB). */
  rssMiB(): number;
  /** The newest /metrics scrape (polled every second once /healthz answers), parsed. */
  metrics(): Map<string, number>;
  /** Resolves with the exit code once serve has exited (early or stopped); `child.signalCode` names a signal that ended it. */
  exited: Promise<number | null>;
  logFile: string;
}

/** Options of {@link startServe}. */
export interface ServeOptions {
  dataDir: string;
  brokers?: string;
  topic?: string;
  group?: string;
  /** Wait at most this long for /readyz. */
  readyTimeoutMs: number;
  log: (s: string) => void;
  /** Called right after the spawn with its performance.now(), before /readyz is awaited. */
  onSpawn?: (spawnAt: number) => void;
  /** Environment of serve over the bench's own (e.g. ANALYZER_ENABLED=false). */
  env?: Record<string, string>;
}

/** pids of a process and its descendants (/proc/<pid>/task/<tid>/children). */
function tree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${out[i]}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        for (const c of readFileSync(`/proc/${out[i]}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) out.push(Number(c));
      } catch {
        // the thread ended
      }
    }
  }
  return out;
}

function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Prometheus text → "name{labels}" → value. */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

async function ok(url: string): Promise<boolean> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(5000) });
    await r.arrayBuffer();
    return r.status === 200;
  } catch {
    return false;
  }
}

/** Spawns serve on `dataDir` and resolves once /readyz answered 200 (or the child exited, or the timeout passed). */
export async function startServe(o: ServeOptions): Promise<ServeRun> {
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    TOOL_AUDIT_DATA_DIR: o.dataDir,
    CLICKHOUSE_DATABASE: 'tool_audit',
    TOOL_AUDIT_API_KEYS: `${HISTORY_KEY}:read,ingest,admin`,
    // One client sends its requests back to back: the per-key rate limit would answer 429.
    RATE_LIMIT_PER_MINUTE: '0',
    ANALYZER_ENABLED: 'true',
    LOG_LEVEL: 'info',
    ...o.env,
  };
  delete env.CLICKHOUSE_URL;
  delete env.KAFKA_BROKERS;
  if (o.brokers && o.topic) Object.assign(env, { KAFKA_BROKERS: o.brokers, KAFKA_TOPIC: o.topic, KAFKA_DLQ_TOPIC: `${o.topic}.dlq`, KAFKA_GROUP_ID: o.group });
  const logFile = join(o.dataDir, '..', `serve-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
  const logStream = createWriteStream(logFile);
  const spawnAt = performance.now();
  const spawnWallMs = Date.now();
  const child = spawn(process.execPath, [join(ROOT, 'bin/tool-audit.mjs'), 'serve'], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(logStream);
  child.stderr?.pipe(logStream);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  o.onSpawn?.(spawnAt);
  let done = false;
  void exited.then(() => (done = true));
  let peak = 0;
  const rssTimer = setInterval(() => {
    if (done || !child.pid) return;
    peak = Math.max(peak, tree(child.pid).reduce((s, p) => s + rssMiB(p), 0));
  }, 500);
  const base = `http://127.0.0.1:${port}`;
  let metrics = new Map<string, number>();
  let healthzS: number | null = null;
  let readyzS: number | null = null;
  const scrape = async () => {
    while (!done) {
      if (healthzS !== null) {
        try {
          metrics = parseMetrics(await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) })).text());
        } catch {
          // a busy event loop; the next scrape will tell
        }
      }
      await sleep(1000);
    }
  };
  void scrape();
  void exited.then(() => clearInterval(rssTimer));
  // /healthz and /readyz polled side by side every 100 ms, each until its first 200.
  while (!done && readyzS === null && performance.now() - spawnAt < o.readyTimeoutMs) {
    const [h, r] = await Promise.all([healthzS === null ? ok(`${base}/healthz`) : true, ok(`${base}/readyz`)]);
    const s = (performance.now() - spawnAt) / 1000;
    if (h && healthzS === null) healthzS = s;
    if (r) readyzS = s;
    else await sleep(100);
  }
  if (done) o.log(`serve exited (${child.exitCode}) before /readyz answered; see ${logFile}`);
  else if (readyzS === null) o.log(`serve not ready within ${o.readyTimeoutMs / 1000} s`);
  const rssNow = () => (child.pid && !done ? tree(child.pid).reduce((s, p) => s + rssMiB(p), 0) : 0);
  return { child, port, base, spawnAt, spawnWallMs, healthzS, readyzS, peakRssMiB: () => peak, rssMiB: rssNow, metrics: () => metrics, exited, logFile };
}

/** SIGTERM, then SIGKILL after `graceMs`; returns the seconds it took and whether it had to be killed. */
export async function stopServe(run: ServeRun, graceMs = 60_000): Promise<{ stopS: number; killed: boolean; code: number | null; signal: string | null }> {
  const t0 = performance.now();
  if (run.child.exitCode !== null || run.child.signalCode) return { stopS: 0, killed: false, code: run.child.exitCode, signal: run.child.signalCode };
  run.child.kill('SIGTERM');
  let killed = false;
  const t = setTimeout(() => {
    killed = true;
    run.child.kill('SIGKILL');
  }, graceMs);
  const code = await run.exited;
  clearTimeout(t);
  return { stopS: (performance.now() - t0) / 1000, killed, code, signal: run.child.signalCode };
}

/** Warnings and worse in serve's log (pino JSON levels ≥ 40), counted, with the first distinct messages. */
export function logProblems(logFile: string): { warn: number; error: number; fatal: number; samples: string[] } {
  const out = { warn: 0, error: 0, fatal: 0, samples: [] as string[] };
  const seen = new Set<string>();
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    let level = 0;
    let msg = line;
    try {
      const j = JSON.parse(line) as { level?: number; msg?: string; err?: unknown };
      level = j.level ?? 0;
      msg = `${j.msg ?? ''}${j.err ? `: ${JSON.stringify(j.err).slice(0, 300)}` : ''}`;
    } catch {
      // not JSON: a crash's stack trace, or output of a library
      if (/error|exception|fatal/i.test(line)) level = 50;
    }
    if (level >= 60) out.fatal++;
    else if (level >= 50) out.error++;
    else if (level >= 40) out.warn++;
    else continue;
    if (!seen.has(msg.slice(0, 120)) && out.samples.length < 8) {
      seen.add(msg.slice(0, 120));
      out.samples.push(`[${level}] ${msg.slice(0, 400)}`);
    }
  }
  return out;
}
