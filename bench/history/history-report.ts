/**
 * The figures of `npm run bench:history` and their table: one {@link RunFigures} per serve run
 * (the history run, the baseline), derived from what was watched during the run and what the run
 * left in its data directory.
 */
import type { HistoryMeta, RunState } from './history-data.ts';
import type { EndpointResult } from './history-load.ts';

/** The jobs whose catch-up is timed: their name in analyzer_progress (dedup: dedup_progress). */
export const JOBS = ['dependencies', 'auditor', 'auditor-manifest', 'dedup-index'] as const;

/** What one serve run measured. */
export interface RunFigures {
  name: string;
  dataDir: string;
  healthzS: number | null;
  readyzS: number | null;
  peakRssMiB: number;
  /** Seconds from spawn until the consumer group's lag was 0 (every offset committed); null: not within the run. */
  ingestLag0S: number | null;
  /** Group lag when the load window ended. */
  lagAtLoadEnd: number | null;
  /** Per job: seconds from spawn to the write of its first watermark ≥ the history's newest ingested_at; null: never. */
  catchUpS: Record<string, number | null>;
  /** Watermark writes per job during the run. */
  watermarkWrites: Record<string, number>;
  load: EndpointResult[];
  /** The same reads, only those after the dedup index caught up (spawn + afterS). */
  loadAfterIndex?: { afterS: number; load: EndpointResult[] };
  loadSeconds: number;
  violations: Record<string, number>;
  rows: RunState['rows'] | null;
  stop: { stopS: number; killed: boolean; code: number | null; signal?: string | null };
  exitedEarly: boolean;
  log: { file: string; warn: number; error: number; fatal: number; samples: string[] };
  /** Seconds the run waited past the load window for lag 0 and catch-up (bounded by --max-wait-minutes). */
  waitedS: number;
  /** serve's own view when the load window ended: /metrics summaries of where a read's time goes. */
  atLoadEnd?: Record<string, number>;
}

/** The /metrics summaries printed beside the reads' latency: ClickHouse per lane, and the event loop. */
const INSIDE = [
  ['read statements in ClickHouse', 'tool_audit_clickhouse_statement_seconds', 'lane="read",'],
  ['read statements waiting for a connection', 'tool_audit_clickhouse_wait_seconds', 'lane="read",'],
  ['job statements in ClickHouse', 'tool_audit_clickhouse_statement_seconds', 'lane="job",'],
  ['event loop delay (per-second max)', 'tool_audit_event_loop_delay_seconds', ''],
] as const;

function insideLines(m: Record<string, number>): string[] {
  const ms = (name: string, labels: string, q: string) => {
    const v = m[`${name}{${labels}quantile="${q}"}`];
    return v === undefined ? '—' : (v * 1000).toFixed(v < 0.01 ? 1 : 0);
  };
  return INSIDE.map(([what, name, labels]) => `  ${what}: p50 ${ms(name, labels, '0.5')} / p95 ${ms(name, labels, '0.95')} / p99 ${ms(name, labels, '0.99')} ms (last 1,024)`);
}

/** Catch-up times and watermark writes from a run's analyzer_progress / dedup_progress rows. */
export function catchUp(state: RunState, historyEndMs: number, spawnWallMs: number): Pick<RunFigures, 'catchUpS' | 'watermarkWrites'> {
  const catchUpS: Record<string, number | null> = {};
  const watermarkWrites: Record<string, number> = {};
  for (const job of JOBS) {
    const rows = state.progress.filter((p) => p.name === job && p.updatedMs >= spawnWallMs);
    watermarkWrites[job] = rows.length;
    const first = rows.filter((p) => p.watermarkMs >= historyEndMs).sort((a, b) => a.updatedMs - b.updatedMs)[0];
    catchUpS[job] = first ? (first.updatedMs - spawnWallMs) / 1000 : null;
  }
  return { catchUpS, watermarkWrites };
}

const s = (x: number | null | undefined) => (x === null || x === undefined || Number.isNaN(x) ? '—' : `${x.toFixed(1)} s`);
const ms = (x: number) => (Number.isNaN(x) ? '—' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const n = (x: number) => x.toLocaleString('en');

function latencyTable(load: EndpointResult[]): string[] {
  const lh = ['endpoint', 'n', 'errors', 'p50', 'p95', 'p99', 'max'];
  const lr = load.map((e) => [e.name, n(e.n), n(e.errors), ms(e.p50), ms(e.p95), ms(e.p99), ms(e.max)]);
  const lw = lh.map((h, i) => Math.max(h.length, ...lr.map((x) => (x[i] as string).length)));
  const f = (x: string[]) => `| ${x.map((c, i) => (i === 0 ? c.padEnd(lw[i] as number) : c.padStart(lw[i] as number))).join(' | ')} |`;
  return [f(lh), `|${lw.map((x) => '-'.repeat(x + 2)).join('|')}|`, ...lr.map(f), ...load.filter((x) => x.errorSamples.length).map((e) => `  ${e.name} errors: ${e.errorSamples.join(' | ')}`)];
}

/** The printed report. */
export function report(meta: HistoryMeta & { built: boolean }, packets: { topic: string; messages: number; toolCalls: number } | null, runs: RunFigures[], notes: string[]): string {
  const sh = meta.shape;
  const out = [
    `bench:history — N = ${n(meta.rows.invocations)} calls (${n(sh.tasks)} tasks, ${sh.days} days, ${n(meta.rows.outputs)} outputs, ${n(meta.rows.workflows)} emitted dependencies), ` +
      `${meta.built ? 'built now' : 'reused'} (build ${meta.buildSeconds.toFixed(0)} s)`,
    `defects: I11 backwards backfill ≈ ${n(meta.expected.i11)} (share ${sh.i11Share}), I4 failures without error ${n(meta.expected.i4)} (share ${sh.i4Share}), M2 sql_query args missing q ${n(meta.expected.m2)}`,
  ];
  if (packets) out.push(`topic ${packets.topic}: ${n(packets.messages)} packets (${n(packets.toolCalls)} tool_calls and their outputs, redeliveries, a few invalid)`);
  out.push(...notes, '');
  const rowsOf = (f: (r: RunFigures) => string) => runs.map(f);
  const lines: Array<[string, string[]]> = [
    ['spawn → /healthz 200', rowsOf((r) => s(r.healthzS))],
    ['spawn → /readyz 200', rowsOf((r) => s(r.readyzS))],
    ['peak RSS, serve + children', rowsOf((r) => `${r.peakRssMiB.toFixed(0)} MiB`)],
    ['ingest: spawn → consumer lag 0', rowsOf((r) => s(r.ingestLag0S))],
    ['ingest: /readyz → lag 0', rowsOf((r) => (r.ingestLag0S !== null && r.readyzS !== null ? s(r.ingestLag0S - r.readyzS) : '—'))],
    ['group lag at the end of the load window', rowsOf((r) => (r.lagAtLoadEnd === null ? '—' : n(r.lagAtLoadEnd)))],
    ...JOBS.map((j): [string, string[]] => [`catch-up: ${j} (spawn → watermark ≥ history end)`, rowsOf((r) => `${s(r.catchUpS[j])} (${r.watermarkWrites[j] ?? 0} writes)`)]),
    ['violations recorded (by invariant)', rowsOf((r) => Object.entries(r.violations).map(([k, v]) => `${k} ${n(v)}`).join(', ') || 'none')],
    ['invocations after the run', rowsOf((r) => (r.rows ? n(r.rows.invocations) : '—'))],
    ['waited after the load window', rowsOf((r) => s(r.waitedS))],
    ['stop (SIGTERM → exit)', rowsOf((r) => `${s(r.stop.stopS)}${r.stop.killed ? ' KILLED' : ''}, code ${r.stop.code}${r.stop.signal ? ` (${r.stop.signal})` : ''}${r.exitedEarly ? ', EXITED EARLY' : ''}`)],
    ['serve log: warn / error / fatal', rowsOf((r) => `${r.log.warn} / ${r.log.error} / ${r.log.fatal}`)],
  ];
  const head = ['figure', ...runs.map((r) => r.name)];
  const table = [head, ...lines.map(([k, v]) => [k, ...v])];
  const w = head.map((_, i) => Math.max(...table.map((r) => (r[i] ?? '').length)));
  const fmt = (r: string[]) => `| ${r.map((x, i) => x.padEnd(w[i] as number)).join(' | ')} |`;
  out.push(fmt(head), `|${w.map((x) => '-'.repeat(x + 2)).join('|')}|`, ...table.slice(1).map(fmt));
  const full = runs.find((r) => r.name.startsWith('history'));
  const empty = runs.find((r) => r.name.startsWith('baseline'));
  if (full?.ingestLag0S && empty?.ingestLag0S) {
    out.push('', `ingest, whole run (spawn → lag 0): full / empty = ${(full.ingestLag0S / empty.ingestLag0S).toFixed(2)}`);
  }
  for (const r of runs.filter((x) => x.load.length > 0)) {
    out.push('', `read latency during ${r.name} (${r.loadSeconds.toFixed(0)} s window, one client, sequential requests; ms):`, ...latencyTable(r.load));
    if (r.loadAfterIndex) out.push('', `the same, only the reads after the dedup index caught up (${r.loadAfterIndex.afterS.toFixed(0)} s after spawn); ms:`, ...latencyTable(r.loadAfterIndex.load));
    if (r.atLoadEnd) out.push('', `inside serve at the end of ${r.name}'s load window (/metrics):`, ...insideLines(r.atLoadEnd));
  }
  for (const r of runs.filter((x) => x.log.samples.length)) out.push('', `${r.name}: serve log problems (${r.log.file}):`, ...r.log.samples.map((x) => `  ${x}`));
  return out.join('\n');
}
