/**
 * Measurement and report of the ingest benchmark (bench/ingest/ingest.ts): CPU, threads and memory of a
 * child from /proc, one result per phase, and the printed table.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { median } from '../stats.ts';

const HZ = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** What a phase consumed: packets and their bytes. */
export interface Packets {
  messages: number;
  bytes: number;
}

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
export function peakRssMiB(pid: number): number {
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

/** /proc readings at one instant. */
export interface Sample {
  t: number;
  cpu: number;
  broker: number;
  machine: number;
  threads: Map<string, number>;
}
/** Reads the /proc counters of a child (and of the broker). */
export const sample = (pid: number, brokerPid: number | undefined): Sample => ({
  t: performance.now(),
  cpu: cpuSeconds(pid),
  broker: cpuSeconds(brokerPid),
  machine: machineBusySeconds(),
  threads: threadCpu(pid),
});

/** One measured phase: a row of the table. */
export interface PhaseResult {
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

export function phaseResult(name: string, counts: Packets, spawnAt: number, a: Sample, b: Sample, pid: number, verified: string): PhaseResult {
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

/** Header of the run: what was preloaded and rejected, and the topics. */
export interface RunInfo {
  preload: string;
  topics: string[];
}

/** The table of results, the ratios, verifications and CPU by thread. */
export function table(results: PhaseResult[], info: RunInfo): string {
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
  const out = [info.preload, ...info.topics, line(head), ...rows.map(line)];
  const ours = results.find((r) => r.name.startsWith('(a)'));
  const rejects = results.find((r) => r.name.startsWith('(a) reject'));
  const engine = results.find((r) => r.name.startsWith('(b)'));
  if (ours && engine) {
    out.push(
      `ratio (a)/(b): throughput ${((engine.seconds / engine.packets) / (ours.seconds / ours.packets)).toFixed(2)}, ` +
        `CPU efficiency ${(engine.cpuSeconds / engine.packets / (ours.cpuSeconds / ours.packets)).toFixed(2)} (CPU per packet of (b) over (a))`,
    );
  }
  if (ours && rejects) out.push(rejectLine(results));
  for (const r of results) out.push(`${r.name}: ${r.verified}; load average at end ${r.load}`);
  for (const r of results) out.push(`${r.name} CPU by thread: ${r.threads}`);
  return out.join('\n');
}

/** Per pass (accept and reject-mix of the same data directory): reject rate over accept rate, and accept CPU per packet over reject's. */
export function rejectPasses(results: readonly PhaseResult[]): Array<{ rate: number; cpu: number }> {
  return results
    .filter((r) => r.name.startsWith('(a) reject'))
    .map((rej) => {
      const pass = rej.name.replace(/^\(a\) reject-mix/, '');
      const acc = results.find((r) => r.name === `(a) accept${pass}`);
      return acc ? { rate: rejectOverAccept(acc, rej), cpu: acc.cpuSeconds / acc.packets / (rej.cpuSeconds / rej.packets) } : undefined;
    })
    .filter((x) => x !== undefined);
}

/** The reject/accept ratios of each pass, and their median. */
function rejectLine(results: readonly PhaseResult[]): string {
  const pairs = rejectPasses(results);
  const list = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');
  const rates = pairs.map((p) => p.rate);
  const cpus = pairs.map((p) => p.cpu);
  if (pairs.length === 1) return `reject rate / accept rate = ${list(rates)} (CPU per packet, accept over reject: ${list(cpus)})`;
  return `reject rate / accept rate per pass: ${list(rates)}; median ${median(rates).toFixed(2)} (CPU per packet, accept over reject: ${list(cpus)}; median ${median(cpus).toFixed(2)})`;
}

/** Packets/s of the reject-mix phase over packets/s of the accept phase. */
export function rejectOverAccept(accept: PhaseResult, rejects: PhaseResult): number {
  return rejects.packets / rejects.seconds / (accept.packets / accept.seconds);
}
