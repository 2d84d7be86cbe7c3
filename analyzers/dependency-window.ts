/**
 * The dependency analyzer's step by ingest time. The segments are ordered by task, so
 * reading "every call of the tasks a step touched" reads most of the table's granules whatever
 * the step's size (~0.4 s a statement at 10 M calls, several per step): a backlog of weeks took
 * longer than an hour. A pair is two calls of one task created less than the dependency window
 * apart, and such calls are ingested close together; so a step reads, through the by_ingest_jobs
 * projection (migration 013), the calls ingested in the step and in a look-back before it, and
 * links those. Only a call that reached ClickHouse long after it was created — whose partners
 * may have been ingested before the look-back — sends its task down the whole-task path.
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { forEachSliced, mapSliced, setSliced } from '../platform/cooperative.ts';
import { linkCalls, pairKey, type CallPair } from './pairs.ts';
import type { StoredPair } from './store.ts';

/** How far before a step its calls' partners are looked for, at most (ingest time). */
const LOOKBACK_MS = 3600_000;
/** At most this many calls of the look-back are read; a busier hour shortens the look-back. */
const LOOKBACK_ROWS = 200_000;
/** Clock difference allowed between producers (created_at) and ClickHouse (ingested_at). */
const SKEW_MS = 300_000;

const RANGE = `ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')`;

/** A call of the window, without its args. */
export interface WindowCall {
  call_id: string;
  task_id: string;
  tool_id: string;
  t: number;
  ingested: number;
}

/** What a step found by its window: the pairs to write, and the tasks that need the whole-task path. */
export interface WindowPairs {
  /** Pairs with a call in the step that are not stored, with the task and the succeeding call's args. */
  missing: Array<{ task: string; pair: CallPair; args: string }>;
  /** Calls of the step linked here. */
  calls: number;
  /** Tasks linked here. */
  tasks: number;
  /** Tasks with a call created too long before it was ingested: linked whole by the caller. */
  late: string[];
}

/**
 * Where the look-back of a step starting at `fromMs` begins: `spanMs` (an hour) before, or later
 * when more than `rows` calls were ingested in that span (a bulk load), so the statements that read
 * it stay bounded. Shared by the analyzer, I10 and I11.
 */
export async function lookbackFrom(ch: ClickHouseDoor, fromMs: number, rows = LOOKBACK_ROWS, spanMs = LOOKBACK_MS): Promise<number> {
  const lookback = Math.max(0, fromMs - spanMs);
  const [r] = await ch.select<{ ms: string }>(
    `SELECT toUnixTimestamp64Milli(ingested_at) AS ms FROM {db:Identifier}.tool_invocations
     WHERE ${RANGE} ORDER BY ingested_at DESC LIMIT 1 OFFSET {n:UInt64}`,
    { from: lookback, to: fromMs, n: rows },
  );
  return r ? Math.max(lookback, Number(r.ms)) : lookback;
}

/**
 * The calls of the tasks a step touched, from its look-back on: `byTask` holds the tasks whose
 * partners are all in it; `late`, those with a call created so long before it was stored that
 * its partners may lie before the look-back (the caller reads those tasks whole). `rows`: the
 * step's dependency rows, whose tasks are touched too — by the window when both their calls are
 * in it, else whole.
 */
export async function windowOfStep(
  ch: ClickHouseDoor,
  fromMs: number,
  toMs: number,
  windowMs: number,
  rows: ReadonlyArray<{ task_id: string; p: string; s: string }> = [],
): Promise<{ back: number; calls: WindowCall[]; inStep: Set<string>; byTask: Map<string, WindowCall[]>; late: Set<string> }> {
  const back = await lookbackFrom(ch, fromMs);
  const read = await ch.select<{ call_id: string; task_id: string; tool_id: string; t: string; i: string }>(
    `SELECT toString(call_id) AS call_id, task_id, tool_id, toUnixTimestamp64Milli(created_at) AS t, toUnixTimestamp64Milli(ingested_at) AS i
     FROM {db:Identifier}.tool_invocations WHERE ${RANGE} AND task_id != ''`,
    { from: back, to: toMs },
  );
  // A step and its look-back are up to ~250 k calls: every pass over them is sliced (a
  // pass held the event loop, and every request of the process, for up to ~100 ms at 30 M calls).
  const calls: WindowCall[] = await mapSliced(read, (r) => ({ call_id: r.call_id, task_id: r.task_id, tool_id: r.tool_id, t: Number(r.t), ingested: Number(r.i) }));
  // A call of the step whose partners (created within windowMs of it) may have been ingested
  // before the look-back began: one that reached ClickHouse later after its creation than that.
  // A look-back from the epoch leaves nothing before it.
  const lateAfter = back === 0 ? Number.POSITIVE_INFINITY : fromMs - back - SKEW_MS - windowMs;
  const stepTasks = new Set<string>();
  const late = new Set<string>();
  // The step's own calls (ingested after fromMs), gathered in the same pass.
  const inStep = new Set<string>();
  await forEachSliced(calls, (c) => {
    if (c.ingested <= fromMs) return;
    inStep.add(c.call_id);
    stepTasks.add(c.task_id);
    if (c.ingested - c.t > lateAfter) late.add(c.task_id);
  });
  const known = await setSliced(calls, (c) => c.call_id);
  await forEachSliced(rows, (r) => {
    if (r.task_id === '') return;
    if (known.has(r.p) && known.has(r.s)) stepTasks.add(r.task_id);
    else late.add(r.task_id);
  });
  const byTask = new Map<string, WindowCall[]>();
  await forEachSliced(calls, (c) => {
    if (!stepTasks.has(c.task_id) || late.has(c.task_id)) return;
    const list = byTask.get(c.task_id);
    if (list) list.push(c);
    else byTask.set(c.task_id, [c]);
  });
  return { back, calls, inStep, byTask, late };
}

/** Links the calls ingested in (fromMs, toMs] with those of their look-back; see the module doc. */
export async function windowPairs(ch: ClickHouseDoor, fromMs: number, toMs: number, windowMs: number): Promise<WindowPairs> {
  const { back, inStep, byTask, late } = await windowOfStep(ch, fromMs, toMs, windowMs);
  const found: Array<{ task: string; pair: CallPair }> = [];
  await forEachSliced(
    byTask,
    ([task, list]) => {
      for (const pair of linkCalls(list, windowMs)) if (inStep.has(pair.preceding.call_id) || inStep.has(pair.succeeding.call_id)) found.push({ task, pair });
    },
    200,
  );
  const stored = await storedPairs(ch, [...byTask.keys()], back);
  const missing: typeof found = [];
  await forEachSliced(found, (f) => void (stored.has(pairKey(f.pair.preceding.call_id, f.pair.succeeding.call_id)) || missing.push(f)));
  const args = await argsOf(ch, [...(await setSliced(missing, (m) => m.pair.succeeding.call_id))], back);
  return {
    missing: await mapSliced(missing, (m) => ({ ...m, args: args.get(m.pair.succeeding.call_id) ?? '' })),
    calls: inStep.size,
    tasks: byTask.size,
    late: [...late],
  };
}

/**
 * Pair keys stored for the tasks since the look-back began: the analyzer writes a pair after both
 * its calls are stored, so the row of a pair of two window calls is at least that recent. (An
 * emitted row stored earlier than its own calls is missed; the analyzer's row beside it is then
 * superseded by it, as for any emitted row that comes after the analyzer's.)
 */
async function storedPairs(ch: ClickHouseDoor, tasks: string[], back: number): Promise<Set<string>> {
  return setSliced(await storedPairCounts(ch, tasks, back), (p) => pairKey(p.preceding_call_id, p.succeeding_call_id));
}

/**
 * The dependency rows of the tasks stored since the look-back began, one per pair with how many
 * rows it has (its emitted rows when it has any, else the analyzer's), as pairsOfTasks counts them.
 */
export async function storedPairCounts(ch: ClickHouseDoor, tasks: string[], back: number): Promise<StoredPair[]> {
  const out: StoredPair[] = [];
  for (let i = 0; i < tasks.length; i += 2000) {
    const rows = await ch.selectFields(
      `SELECT task_id, toString(preceding_call_id) AS p, toString(succeeding_call_id) AS s, if(countIf(origin = 'emitted') > 0, countIf(origin = 'emitted'), count())
       FROM {db:Identifier}.tool_workflows
       WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND task_id IN {tasks:KeySet(String)} GROUP BY task_id, p, s`,
      { from: back, tasks: tasks.slice(i, i + 2000) },
    );
    await forEachSliced(rows, ([task, p, s, n]) => out.push({ task_id: task ?? '', preceding_call_id: p ?? '', succeeding_call_id: s ?? '', n: Number(n) }));
  }
  return out;
}

/** Canonical args of window calls, by call_id (for data_flow of the pairs written). */
async function argsOf(ch: ClickHouseDoor, callIds: string[], back: number): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < callIds.length; i += 2000) {
    const rows = await ch.selectFields(
      `SELECT toString(call_id), args FROM {db:Identifier}.tool_invocations
       WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND call_id IN {ids:KeySet(UUID)}`,
      { from: back, ids: callIds.slice(i, i + 2000) },
    );
    await forEachSliced(rows, ([id, a]) => out.set(id ?? '', a ?? ''));
  }
  return out;
}
