/**
 * The task view's fast path: every row of one task in one statement (its calls and dependencies
 * from their segments, its outputs from `task_rows`, each a range read by task), plus the outputs whose
 * task was not known at ingest, found by call_id. A page is then cut in JavaScript with exactly
 * the rules of the statements of by-task.ts (window, cursor, order, which dependencies and
 * outputs belong to a page). A task with more rows than the fast path takes goes the precise way.
 */
import { DEPENDENCY_COLUMNS, TASK_INVOCATION_COLUMNS, type InvocationReadRow, type OutputReadRow } from './rows.ts';
import { TURN_COLUMNS, type TurnReadRow } from './model-turns.ts';
import { RUN_COLUMNS, type RunReadRow } from './agent-runs.ts';
import type { Dependency } from '../schemas/answers.ts';
import type { QuerySpec } from './sql.ts';

/** Rows of one task the fast path reads at most; a larger task is paged by the segment statements. */
export const TASK_ROWS_CAP = 3000;

/**
 * All rows of a task (kinds call / dependency / output / turn: its model turns / run: its agent runs), and `orphan` rows: the call_ids of outputs
 * stored without their task (orphan_outputs, migration 007) ingested from `since` on: the tail of
 * what the read API keeps in memory (orphan-call-ids.ts). Usually none. Calls and dependencies are
 * read from their segments, whose order starts with task_id (a range read each), as JSON of the
 * segment statements' own column lists (rows.ts), which task_rows held for them until migration 020; outputs, ordered by tool, come
 * from task_rows (qualified: in ClickHouse the alias `kind` would otherwise stand for the column
 * in WHERE). Each part reads at most `cap` rows.
 */
export const TASK_ROWS: QuerySpec = {
  name: 'task_rows',
  description: 'Every stored row of one task (call, dependency, output, model turn, agent run as JSON), and the calls of outputs stored without a task since a time (orphan).',
  sql: `SELECT 'call' AS kind,
       formatRow('JSONEachRow', ${TASK_INVOCATION_COLUMNS}) AS row
FROM {db:Identifier}.tool_invocations
WHERE task_id = {task_id:String}
LIMIT {cap:UInt32}
UNION ALL
SELECT 'dependency' AS kind,
       formatRow('JSONEachRow', ${DEPENDENCY_COLUMNS}) AS row
FROM {db:Identifier}.tool_workflows
WHERE task_id = {task_id:String}
LIMIT {cap:UInt32}
UNION ALL
SELECT 'output' AS kind, row FROM {db:Identifier}.task_rows AS tr
WHERE tr.task_id = {task_id:String} AND tr.kind = 'output'
LIMIT {cap:UInt32}
UNION ALL
SELECT 'turn' AS kind, formatRow('JSONEachRow', ${TURN_COLUMNS}) AS row FROM {db:Identifier}.model_turns
WHERE task_id = {task_id:String}
LIMIT {cap:UInt32}
UNION ALL
SELECT 'run' AS kind, formatRow('JSONEachRow', ${RUN_COLUMNS}) AS row FROM {db:Identifier}.agent_runs
WHERE task_id = {task_id:String}
LIMIT {cap:UInt32}
UNION ALL
SELECT 'orphan' AS kind, toString(call_id) AS row FROM {db:Identifier}.orphan_outputs
WHERE ingested_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')`,
  params: { db: 'the database', task_id: 'the task', cap: 'rows read at most per kind (one more than the fast path takes)', since: 'epoch ms: orphans ingested from then on' },
};

/** A row of {@link TASK_ROWS}. */
export interface TaskRow {
  kind: 'call' | 'dependency' | 'output' | 'turn' | 'run' | 'orphan';
  row: string;
}

/** Cursor position: created_at (ms) and call_id of the last call of the previous page. */
export type TaskCursor = readonly [number, string];

/** A page cut from a task's rows. */
export interface TaskPage {
  calls: InvocationReadRow[];
  more: boolean;
  dependencies: Dependency[];
  outputs: OutputReadRow[];
  /**
   * The task's model turns, every one stored (one per turn_id), oldest first; the caller keeps
   * those of the page's span. Absent when not read with the page (the segment way): the caller
   * reads the span's turns then.
   */
  turns?: TurnReadRow[];
  /** The task's agent runs, every one stored; absent when not read with the page (the segment way). */
  runs?: RunReadRow[];
}

/** ClickHouse's order of UUIDs: the second half (as hex), then the first. */
export function uuidOrder(a: string, b: string): number {
  const key = (u: string) => {
    const h = u.replace(/-/g, '');
    return h.slice(16) + h.slice(0, 16);
  };
  const x = key(a);
  const y = key(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

const callOrder = (a: { created_ms: number | string; call_id: string }, b: { created_ms: number | string; call_id: string }) =>
  Number(a.created_ms) - Number(b.created_ms) || uuidOrder(a.call_id, b.call_id);

/** Outputs oldest first, as their statement orders them (created_at, output_id). */
export function outputOrder(a: OutputReadRow, b: OutputReadRow): number {
  return Number(a.created_ms) - Number(b.created_ms) || uuidOrder(a.output_id, b.output_id);
}

const ORIGIN_RANK: Record<string, number> = { emitted: 1, analyzer: 2 };

/**
 * Cuts one page from all rows of a task: the calls in [fromMs, toMs) after the cursor, in call
 * order, `limit` of them; the dependencies touching them (one per pair, an emitted one before an
 * analyzer's); their outputs. A row stored twice counts once.
 */
export function pageFromTaskRows(rows: readonly TaskRow[], p: { fromMs: number; toMs: number; limit: number; after?: TaskCursor }): TaskPage {
  const calls = new Map<string, InvocationReadRow>();
  const deps = new Map<string, Dependency>();
  const outputs = new Map<string, OutputReadRow>();
  const turns = new Map<string, TurnReadRow>();
  const runs: RunReadRow[] = [];
  for (const r of rows) {
    if (r.kind === 'orphan') continue;
    const v: unknown = JSON.parse(r.row);
    if (r.kind === 'call') {
      const c = v as InvocationReadRow;
      calls.set(c.call_id, c);
    } else if (r.kind === 'dependency') {
      const d = v as Dependency;
      const key = `${d.preceding_call_id}>${d.succeeding_call_id}`;
      const had = deps.get(key);
      if (!had || (ORIGIN_RANK[d.origin] ?? 9) < (ORIGIN_RANK[had.origin] ?? 9)) deps.set(key, d);
    } else if (r.kind === 'output') {
      const o = v as OutputReadRow;
      outputs.set(o.output_id, o);
    } else if (r.kind === 'run') {
      runs.push(v as RunReadRow);
    } else {
      const t = v as TurnReadRow;
      turns.set(t.turn_id, t);
    }
  }
  const after = p.after;
  const inPage = [...calls.values()]
    .filter((c) => {
      const ms = Number(c.created_ms);
      if (ms < p.fromMs || ms >= p.toMs) return false;
      return after === undefined || ms > after[0] || (ms === after[0] && uuidOrder(c.call_id, after[1]) > 0);
    })
    .sort(callOrder);
  const page = inPage.slice(0, p.limit);
  const ids = new Set(page.map((c) => c.call_id));
  return {
    calls: page,
    more: inPage.length > p.limit,
    dependencies: [...deps.values()]
      .filter((d) => ids.has(d.preceding_call_id) || ids.has(d.succeeding_call_id))
      .sort((a, b) => uuidOrder(a.preceding_call_id, b.preceding_call_id) || uuidOrder(a.succeeding_call_id, b.succeeding_call_id)),
    outputs: [...outputs.values()].filter((o) => ids.has(o.call_id)).sort(outputOrder),
    turns: [...turns.values()].sort((a, b) => Number(a.created_ms) - Number(b.created_ms) || (a.turn_id < b.turn_id ? -1 : 1)),
    runs,
  };
}
