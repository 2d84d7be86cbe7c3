/**
 * The dependency analyzer's runner: steps through newly ingested calls (by ingested_at, so
 * arrival order and lateness do not matter), links each step's calls with the calls of their
 * tasks ingested shortly before (dependency-window.ts; a task with a call that arrived long after
 * it was made is recomputed whole), and inserts only the pairs not yet stored — redeliveries,
 * re-runs and crashes between insert and watermark therefore never add a second row for a pair.
 */
import { forEachSliced, setSliced } from '../platform/cooperative.ts';
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { ANALYZER_FINGERPRINT } from '../ingest/ports.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { detectDataFlow } from './data-flow.ts';
import { linkCalls, pairKey, type CallPair } from './pairs.ts';
import { periodic, type PeriodicJob } from './scheduler.ts';
import { callsOfTasks, newestIngested, outputsOfCalls, pairsOfTasks, readWatermark, stepEnd, writeWatermark, type StoredCall } from './store.ts';
import { windowPairs } from './dependency-window.ts';

/** A pair to write: its task, its calls and the succeeding call's args (for data_flow). */
type MissingPair = { task: string; pair: CallPair; args: string };

/** Dependencies of {@link createDependencyAnalyzer}. */
export interface DependencyAnalyzerDeps {
  clickhouse: ClickHouseDoor;
  windowMs: number;
  /** Re-scan this much before the watermark: rows of slow inserts become visible out of order. */
  overlapMs: number;
  metrics: MetricsRegistry;
  logger: Logger;
}

/** What one cycle did. */
export interface CycleResult {
  tasks: number;
  calls: number;
  pairsInserted: number;
  watermark: number;
}

const TASK_CHUNK = 2000;
/**
 * Calls (and dependency rows) per step, and the longest step: a backlog is analyzed in steps of
 * bounded size, the watermark moving after each (a crash repeats at most one step).
 */
const STEP_ROWS = 50_000;
const STEP_MAX_SPAN_MS = 86_400_000;
/** The analyzer's name in analyzer_progress (the auditor waits for its watermark). */
export const DEPENDENCY_JOB = 'dependencies';

/** Creates the analyzer. */
export function createDependencyAnalyzer(deps: DependencyAnalyzerDeps): PeriodicJob<CycleResult> {
  const { clickhouse: ch, metrics } = deps;

  /** Pairs of whole tasks (the path of tasks with late calls): every call of each task, linked anew. */
  async function linkTasks(tasks: string[]): Promise<{ calls: number; inserted: number }> {
    const calls = await callsOfTasks(ch, tasks);
    const stored = await setSliced(await pairsOfTasks(ch, tasks), (p) => pairKey(p.preceding_call_id, p.succeeding_call_id));
    const byTask = new Map<string, StoredCall[]>();
    const args = new Map<string, string>();
    await forEachSliced(calls, (c) => {
      const list = byTask.get(c.task_id);
      if (list) list.push(c);
      else byTask.set(c.task_id, [c]);
      args.set(c.call_id, c.args);
    });
    const missing: MissingPair[] = [];
    await forEachSliced(
      byTask,
      ([task, list]) => {
        for (const pair of linkCalls(list, deps.windowMs)) {
          if (!stored.has(pairKey(pair.preceding.call_id, pair.succeeding.call_id))) missing.push({ task, pair, args: args.get(pair.succeeding.call_id) ?? '' });
        }
      },
      200,
    );
    return { calls: calls.length, inserted: await insertPairs(ch, missing) };
  }

  async function runOnce(): Promise<CycleResult> {
    const wm = await readWatermark(ch, DEPENDENCY_JOB);
    const from = Math.max(0, wm - deps.overlapMs);
    const upper = await newestIngested(ch, from);
    metrics.set('tool_audit_analyzer_lag_seconds', 'How far the dependency analyzer is behind ingest (newest ingested_at − watermark)', Math.max(0, upper - wm) / 1000);
    if (upper === 0 || upper <= wm) return { tasks: 0, calls: 0, pairsInserted: 0, watermark: wm };
    let tasks = 0;
    let calls = 0;
    let inserted = 0;
    for (let start = from; start < upper; ) {
      const end = await stepEnd(ch, ['tool_invocations', 'tool_workflows'], start, upper, STEP_ROWS, STEP_MAX_SPAN_MS);
      // The step's calls with those ingested shortly before (dependency-window.ts); whole tasks
      // only for those with a call that arrived long after it was made.
      const w = await windowPairs(ch, start, end, deps.windowMs);
      inserted += await insertPairs(ch, w.missing);
      tasks += w.tasks;
      calls += w.calls;
      for (let i = 0; i < w.late.length; i += TASK_CHUNK) {
        const page = w.late.slice(i, i + TASK_CHUNK);
        const r = await linkTasks(page);
        tasks += page.length;
        calls += r.calls;
        inserted += r.inserted;
      }
      // Never behind the previous watermark: the first step re-scans the overlap before it.
      if (end > wm) await writeWatermark(ch, DEPENDENCY_JOB, end);
      start = end;
    }
    metrics.inc('tool_audit_analyzer_pairs_total', 'Dependency pairs written by the analyzer', {}, inserted);
    metrics.inc('tool_audit_analyzer_tasks_total', 'Tasks (re)analyzed', {}, tasks);
    return { tasks, calls, pairsInserted: inserted, watermark: upper };
  }

  return periodic('dependency analyzer', runOnce, deps.logger);
}

/** Writes the missing pairs with their data flow (from the preceding call's outputs). */
async function insertPairs(ch: ClickHouseDoor, missing: MissingPair[]): Promise<number> {
  if (missing.length === 0) return 0;
  const outputs = await outputsOfCalls(ch, [...new Set(missing.map((m) => m.pair.preceding.call_id))]);
  const rows = missing.map(({ task, pair, args }) => ({
    // Not the bare pair key: an emitted row of the same pair is another row, with its own token.
    key: `analyzer/${pairKey(pair.preceding.call_id, pair.succeeding.call_id)}`,
    row: {
      task_id: task,
      preceding_call_id: pair.preceding.call_id,
      succeeding_call_id: pair.succeeding.call_id,
      preceding_tool_id: pair.preceding.tool_id,
      succeeding_tool_id: pair.succeeding.tool_id,
      time_delta_ms: pair.time_delta_ms,
      data_flow: detectDataFlow(outputs.get(pair.preceding.call_id) ?? [], args),
      origin: 'analyzer',
      fingerprint: ANALYZER_FINGERPRINT,
      source: 'analyzer',
    },
  }));
  await ch.insertRows('tool_workflows', rows);
  return rows.length;
}
