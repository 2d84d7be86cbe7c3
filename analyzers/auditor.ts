/**
 * The auditor: checks the SHOULD and cross-segment rules (I4, I8, I9, I10, I11), and the tool
 * manifest rules (M1–M7 and M9, manifest-audit.ts; M8, output-audit.ts), on rows
 * ingested before now − grace (late packets get that long to arrive) and no later than the
 * dependency analyzer's watermark, and records each violation once in `violations`.
 */
import { forEachSliced } from '../platform/cooperative.ts';
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { checkTaskPairs, type Violation } from './audit-rules.ts';
import { DEPENDENCY_JOB } from './dependency-runner.ts';
import { lookbackFrom, storedPairCounts, windowOfStep } from './dependency-window.ts';
import { I11_LOOKBACK_MS, runInvariantChecks } from './invariant-checks.ts';
import { ManifestAuditor } from './manifest-audit.ts';
import { loadManifestHistory } from './manifest-store.ts';
import { OutputAuditor } from './output-audit.ts';
import { periodic, type PeriodicJob } from './scheduler.ts';
import { callsOfTasks, pairsOfTasks, readWatermark, stepEnd, writeWatermark } from './store.ts';

/** Dependencies of {@link createAuditor}. */
export interface AuditorDeps {
  clickhouse: ClickHouseDoor;
  windowMs: number;
  graceMs: number;
  metrics: MetricsRegistry;
  logger: Logger;
  /** Clock, for tests. */
  now?: () => number;
  /** Step sizes (tests make them small); defaults {@link AUDIT_STEPS}. */
  steps?: Partial<AuditSteps>;
}

/** What one audit cycle did. */
export interface AuditResult {
  from: number;
  to: number;
  found: number;
  recorded: number;
}

const AUDITOR_JOB = 'auditor';

/** Sizes of the auditor's steps; defaults in {@link AUDIT_STEPS}. */
export interface AuditSteps {
  /** Rows of any one segment per step (each check statement works on about this many). */
  rows: number;
  /** Longest step, ms. */
  maxSpanMs: number;
  /** Tasks per I10 page. */
  taskPage: number;
  /** Found violations per record() look-up and insert. */
  recordChunk: number;
  /** Rows before the step that I11 compares with, at most (and no more than an hour of them). */
  lookbackRows: number;
}

/**
 * 50 k rows a step: each check statement then reads about that many rows through the segments'
 * by_ingest_jobs projections (migration 013), whatever is stored. A step spans at most a day:
 * the row bound decides (an hour's cap made a quiet backlog of weeks hundreds of steps of a few
 * statements each, and on embedded ClickHouse under a steady read load each statement waits its turn).
 */
const AUDIT_STEPS: AuditSteps = { rows: 50_000, maxSpanMs: 86_400_000, taskPage: 500, recordChunk: 10_000, lookbackRows: 200_000 };

/** The last detected_at stamp given to a step in this process (each step gets a later one). */
let lastStamp = 0;

// A task's calls and stored pairs, as the I10 rule takes them.
type TaskCalls = Parameters<typeof checkTaskPairs>[1];
type TaskPairs = Parameters<typeof checkTaskPairs>[2];

/** Creates the auditor job. */
export function createAuditor(deps: AuditorDeps): PeriodicJob<AuditResult> {
  const { clickhouse: ch, metrics } = deps;
  const now = deps.now ?? Date.now;
  const steps = { ...AUDIT_STEPS, ...deps.steps };
  const manifestAuditor = new ManifestAuditor(ch, deps.windowMs);
  const outputAuditor = new OutputAuditor(ch);
  const count = (invariant: string, n: number) => metrics.inc('tool_audit_violations_total', 'Violations recorded by the auditor', { invariant }, n);

  /** Records the violations not recorded yet, in bounded chunks; returns how many were new. */
  async function record(found: Violation[]): Promise<number> {
    let recorded = 0;
    for (let i = 0; i < found.length; i += steps.recordChunk) {
      const fresh = await unrecorded(ch, found.slice(i, i + steps.recordChunk));
      await ch.insertRows('violations', fresh.map((v) => ({ key: v.violation_key, row: v })));
      for (const v of fresh) count(v.invariant, 1);
      recorded += fresh.length;
    }
    return recorded;
  }

  /** One step: the check statements, then I10 a page of tasks at a time. */
  async function auditStep(from: number, to: number): Promise<{ found: number; recorded: number }> {
    // A stamp of its own per step (detected_at), by which the step's inserts are counted.
    const at = (lastStamp = Math.max(Date.now(), lastStamp + 1));
    const counts = await runInvariantChecks(ch, from, to, at, await lookbackFrom(ch, from, steps.lookbackRows, I11_LOOKBACK_MS));
    let found = 0;
    let recorded = 0;
    for (const [invariant, n] of Object.entries(counts)) {
      count(invariant, n);
      found += n;
      recorded += n;
    }
    // I10 for the tasks the step touched, from the calls and rows stored since its look-back
    // (dependency-window.ts); whole tasks only where a call or row reaches further back.
    const depRows = await ch.select<{ task_id: string; p: string; s: string }>(
      `SELECT task_id, toString(preceding_call_id) AS p, toString(succeeding_call_id) AS s FROM {db:Identifier}.tool_workflows
       WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')`,
      { from, to },
    );
    const w = await windowOfStep(ch, from, to, deps.windowMs, depRows);
    const pages = { pageSize: steps.taskPage, windowMs: deps.windowMs, record };
    const inWindow = await i10Pages([...w.byTask.keys()], pages, async (tasks) => {
      const pairs = await groupBy(await storedPairCounts(ch, tasks, w.back), (p) => p.task_id);
      return (task) => [w.byTask.get(task) ?? [], pairs.get(task) ?? []];
    });
    const late = await i10Pages([...w.late], pages, async (tasks) => {
      const calls = await groupBy(await callsOfTasks(ch, tasks), (c) => c.task_id);
      const pairs = await groupBy(await pairsOfTasks(ch, tasks), (p) => p.task_id);
      return (task) => [calls.get(task) ?? [], pairs.get(task) ?? []];
    });
    return { found: found + inWindow.found + late.found, recorded: recorded + inWindow.recorded + late.recorded };
  }

  async function runOnce(): Promise<AuditResult> {
    const start = await readWatermark(ch, AUDITOR_JOB);
    const analyzed = await readWatermark(ch, DEPENDENCY_JOB);
    // I10 needs the analyzer to have seen the slice; everything needs the grace period to pass.
    const to = Math.min(now() - deps.graceMs, analyzed);
    // The manifest rules keep a watermark of their own (a first manifest audits back to the start).
    // One read of the manifest's versions per cycle serves the call rules and the output rule.
    const history = await loadManifestHistory(ch, ch.database);
    const m = await manifestAuditor.run(history, to, record);
    const o = await outputAuditor.run(history, to, record);
    const total = { from: start, to: Math.max(start, to), found: m.found + o.found, recorded: m.recorded + o.recorded };
    // Step by step, the watermark moving after each: a crash repeats at most one step, and a
    // backlog is worked through in steps of bounded size.
    for (let from = start; from < to; ) {
      const end = await stepEnd(ch, ['tool_invocations', 'tool_outputs', 'tool_workflows'], from, to, steps.rows, steps.maxSpanMs);
      const r = await auditStep(from, end);
      total.found += r.found;
      total.recorded += r.recorded;
      await writeWatermark(ch, AUDITOR_JOB, end);
      from = end;
    }
    return total;
  }

  return periodic('auditor', runOnce, deps.logger);
}

/** I10 over `tasks` a page at a time, each page's calls and stored pairs from `page`. */
async function i10Pages(
  tasks: string[],
  o: { pageSize: number; windowMs: number; record(found: Violation[]): Promise<number> },
  page: (tasks: string[]) => Promise<(task: string) => [TaskCalls, TaskPairs]>,
): Promise<{ found: number; recorded: number }> {
  let found = 0;
  let recorded = 0;
  for (let i = 0; i < tasks.length; i += o.pageSize) {
    const slice = tasks.slice(i, i + o.pageSize);
    const of = await page(slice);
    // Sliced: a page of tasks held the event loop for ~0.2 s at 30 M calls.
    const i10: Violation[] = [];
    await forEachSliced(slice, (task) => i10.push(...checkTaskPairs(task, ...of(task), o.windowMs)), 200);
    found += i10.length;
    recorded += await o.record(i10);
  }
  return { found, recorded };
}


/** The violations whose keys are not in `violations` yet (each key once). */
export async function unrecorded(ch: ClickHouseDoor, found: readonly Violation[]): Promise<Violation[]> {
  const unique = new Map(found.map((v) => [v.violation_key, v]));
  if (unique.size === 0) return [];
  // The invariants first: violations is ordered by (invariant, detected_at), so only their ranges are read.
  const existing = await ch.selectFields(
    'SELECT violation_key FROM {db:Identifier}.violations WHERE invariant IN {invariants:KeySet(String)} AND violation_key IN {keys:KeySet(String)}',
    { invariants: [...new Set(found.map((v) => v.invariant))], keys: [...unique.keys()] },
  );
  for (const [k] of existing) unique.delete(k ?? '');
  return [...unique.values()];
}

async function groupBy<T>(items: T[], key: (t: T) => string): Promise<Map<string, T[]>> {
  const out = new Map<string, T[]>();
  await forEachSliced(items, (it) => {
    const k = key(it);
    const list = out.get(k);
    if (list) list.push(it);
    else out.set(k, [it]);
  });
  return out;
}
