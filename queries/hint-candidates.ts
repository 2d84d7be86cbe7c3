/**
 * What the hints job measures over a window (analyzers/hint-rules.ts turns it into hints): each
 * cacheable tool's simulated cache (cache-simulation.ts), the data-flow sequences of 2 and 3
 * tools, and the tasks where a tool's failed calls were retried. Statements only; they run
 * through a {@link StatementRunner}.
 */
import type { BundleStat, HintMeasures, HintThresholds, HintWindow, RetryStat } from '../analyzers/hint-rules.ts';
import { HINT_TASK_SAMPLE } from '../analyzers/hint-rules.ts';
import { cacheSavingsAtSuggestedTtl } from './cache-savings.ts';
import { CREATED_IN_WINDOW } from './dashboard-common.ts';
import { runQuery, windowParams, type QueryContext, type QuerySpec, type StatementRunner } from './sql.ts';

const TASKS_IN_WINDOW = `(SELECT task_id FROM {db:Identifier}.tool_invocations WHERE ${CREATED_IN_WINDOW} AND task_id != '' GROUP BY task_id)`;
const SAMPLE = `arraySlice(arraySort(groupUniqArray(task_id)), 1, {max_tasks:UInt32})`;

/**
 * One row per dependency (emitted and analyzer rows of a pair are one) whose output fed the next
 * call (data_flow set), with the gap between the end of the preceding call and the start of the
 * succeeding one, for the tasks with calls in the window; only gaps ≤ max_gap_ms.
 */
const EDGES = `SELECT e.task_id AS task_id, e.p AS p, e.s AS s, e.pt AS pt, e.st AS st, greatest(toInt64(e.delta) - toInt64(c.duration_ms), 0) AS gap
  FROM (
    SELECT task_id, preceding_call_id AS p, succeeding_call_id AS s, any(preceding_tool_id) AS pt, any(succeeding_tool_id) AS st, any(time_delta_ms) AS delta
    FROM {db:Identifier}.tool_workflows
    WHERE task_id IN ${TASKS_IN_WINDOW} AND data_flow IS NOT NULL AND data_flow != ''
    GROUP BY task_id, p, s
  ) AS e
  INNER JOIN (SELECT call_id, duration_ms FROM {db:Identifier}.tool_invocations WHERE ${CREATED_IN_WINDOW} AND task_id IN ${TASKS_IN_WINDOW}) AS c ON c.call_id = e.p
  WHERE gap <= {max_gap_ms:Int64}`;

/** Data-flow sequences of 2 and 3 tools that ran at least min_count times. */
export const HINT_BUNDLES: QuerySpec = {
  name: 'hint_bundles',
  description: 'Sequences of 2 and 3 tools where each output fed the next call (data_flow) within max_gap_ms, run at least min_count times: runs, median step gap, median and total gap per run.',
  sql: `WITH edges AS (${EDGES})
SELECT [pt, st] AS tools, count() AS runs, quantileExact(0.5)(gap) AS median_gap_ms, quantileExact(0.5)(gap) AS saved_ms_per_run, sum(gap) AS saved_ms_total, ${SAMPLE} AS tasks
FROM edges GROUP BY pt, st HAVING runs >= {min_count:UInt32}
UNION ALL
SELECT [a.pt, a.st, b.st] AS tools, count() AS runs, quantileExactArray(0.5)([a.gap, b.gap]) AS median_gap_ms, quantileExact(0.5)(a.gap + b.gap) AS saved_ms_per_run, sum(a.gap + b.gap) AS saved_ms_total, arraySlice(arraySort(groupUniqArray(a.task_id)), 1, {max_tasks:UInt32}) AS tasks
FROM edges AS a INNER JOIN edges AS b ON a.task_id = b.task_id AND a.s = b.p
GROUP BY a.pt, a.st, b.st HAVING runs >= {min_count:UInt32}`,
  params: {
    db: 'database of the segments (Identifier)',
    from: "inclusive lower bound of created_at, 'YYYY-MM-DD hh:mm:ss.sss' UTC",
    to: 'exclusive upper bound of created_at, same format',
    max_gap_ms: 'longest gap between a step’s end and the next step’s start, ms',
    min_count: 'fewest runs of a sequence',
    max_tasks: 'task ids kept per sequence',
  },
};

/** Per (task, tool): the failed calls followed by another call of the tool in the task, when more than `threshold`. */
export const HINT_RETRIES: QuerySpec = {
  name: 'hint_retries',
  description: 'Tasks where more than threshold failed calls of a tool were followed by another call of that tool: the retried failures, their errors (status when none), duration and cost.',
  sql: `SELECT task_id, tool_id, length(failed) AS retried, arrayMap(x -> x.4, failed) AS errors,
  arraySum(arrayMap(x -> x.5, failed)) AS wasted_ms, arraySum(arrayMap(x -> x.6, failed)) AS wasted_usd
FROM (
  SELECT task_id, tool_id, arraySort(groupArray((toUnixTimestamp64Milli(created_at), toString(call_id), status != 'success', ifNull(error, toString(status)), duration_ms, ifNull(cost_usd, 0)))) AS calls,
    arrayFilter((x, i) -> x.3 AND i < length(calls), calls, arrayEnumerate(calls)) AS failed
  FROM {db:Identifier}.tool_invocations
  WHERE ${CREATED_IN_WINDOW} AND task_id != ''
    AND (task_id, tool_id) IN (SELECT task_id, tool_id FROM {db:Identifier}.tool_invocations WHERE ${CREATED_IN_WINDOW} AND task_id != '' AND status != 'success' GROUP BY task_id, tool_id HAVING count() > {threshold:UInt32})
  GROUP BY task_id, tool_id
)
WHERE length(failed) > {threshold:UInt32}
ORDER BY tool_id, task_id`,
  params: {
    db: 'database of the segments (Identifier)',
    from: "inclusive lower bound of created_at, 'YYYY-MM-DD hh:mm:ss.sss' UTC",
    to: 'exclusive upper bound of created_at, same format',
    threshold: 'more retried failures than this in one task make a storm',
  },
};

type Num = number | string;

/** Measures everything the hint rules need over one window. */
export async function measureHints(ch: StatementRunner, db: string, w: HintWindow, t: HintThresholds, ctx: QueryContext): Promise<HintMeasures> {
  const window = windowParams(w);
  const [cache, bundleRows, retryRows] = await Promise.all([
    cacheSavingsAtSuggestedTtl(ch, db, { window: w, maxTasks: HINT_TASK_SAMPLE }, ctx),
    runQuery<{ tools: string[]; runs: Num; median_gap_ms: Num; saved_ms_per_run: Num; saved_ms_total: Num; tasks: string[] }>(
      ch,
      HINT_BUNDLES,
      { db, ...window, max_gap_ms: t.bundleMaxGapMs, min_count: t.bundleMinCount, max_tasks: HINT_TASK_SAMPLE },
      ctx,
    ),
    runQuery<{ task_id: string; tool_id: string; retried: Num; errors: string[]; wasted_ms: Num; wasted_usd: Num }>(ch, HINT_RETRIES, { db, ...window, threshold: t.retryThreshold }, ctx),
  ]);
  const retries: RetryStat[] = retryRows.map((r) => ({ ...r, retried: Number(r.retried), wasted_ms: Number(r.wasted_ms), wasted_usd: Number(r.wasted_usd) }));
  const bundles: BundleStat[] = bundleRows.map((r) => ({
    tools: r.tools,
    runs: Number(r.runs),
    median_gap_ms: Number(r.median_gap_ms),
    saved_ms_per_run: Number(r.saved_ms_per_run),
    saved_ms_total: Number(r.saved_ms_total),
    tasks: r.tasks,
  }));
  return { cache, bundles, retries };
}
