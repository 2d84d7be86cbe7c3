/**
 * Builds the benchmark workload of `npm run bench:queries` INSIDE ClickHouse (INSERT … SELECT
 * FROM numbers()): no rows travel through JavaScript, so 10 million invocations take minutes,
 * not hours. Every value is a deterministic function of the row number, so a rebuild gives the
 * same data; the database is kept between runs and reused when its recorded shape matches.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { FINGERPRINT_DIGITS } from '../../ingest/ports.ts';
import { migrate } from '../../platform/clickhouse/migrate.ts';
import { refreshDedupIndex } from '../../analyzers/dedup-index.ts';
import { cutoverAtEpoch } from '../../platform/clickhouse/cutover.ts';

/** A fingerprint as ingest stores it (ingest/ports.ts: 16 hex digits, then 16 zeros), of 16 random bytes. */
const FP = (bytes: string) => `concat(lower(substring(hex(${bytes}), 1, ${FINGERPRINT_DIGITS})), repeat('0', ${32 - FINGERPRINT_DIGITS}))`;
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';

/** Shape of the generated workload. */
export interface BenchShape {
  invocations: number;
  tasks: number;
  days: number;
}

/** The command-line options of a bench on this history (parseArgs), with their defaults: 10 M calls, 100,000 tasks, 30 days. */
export const BENCH_SHAPE_OPTIONS = {
  invocations: { type: 'string', default: '10000000' },
  tasks: { type: 'string', default: '100000' },
  days: { type: 'string', default: '30' },
  'data-dir': { type: 'string', default: './.bench-data' },
} as const;

/** What the benchmark needs to know about the data it runs on. */
export interface BenchData {
  from: string;
  to: string;
  tools: string[];
  agents: string[];
  /** Task ids spread over the whole range, for the task view. */
  taskIds: string[];
  built: boolean;
}

export const CHAIN = ['search_web', 'fetch_url', 'python_execute', 'create_chart'];
export const OTHERS = ['read_file', 'write_file', 'sql_query', 'llm_summarize', 'image_generate', 'send_email', 'vector_search', 'translate_text'];
export const AGENTS = ['L', 'QA_Agent', 'Researcher', 'Coder', 'Planner', 'Writer', 'Reviewer', 'Ops'];
/** Retention (days) the bench databases are migrated with. */
export const RETENTION = { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 };
/** Version of the generator: a reused database must have been built by this one. */
const GENERATOR = 5;
/** Calls of a task are this far apart (± jitter), so only consecutive calls are within 60 s. */
const STEP_MS = 40_000;
/** Tasks inserted per INSERT … SELECT statement (bounds each statement's memory). */
const CHUNK_TASKS = 10_000;

const sqlList = (xs: string[]) => `[${xs.map((x) => `'${x}'`).join(', ')}]`;

/** INSERT of invocations n ∈ [start, start + count) (parameters: db, per_task, span_ms, base, start, count). */
// Row n of the workload; t = its task, i = its position in the task, h = its random bits.
// Tools follow the search → fetch → python → chart chain 70% of the time.
export const INVOCATIONS_SQL = `
INSERT INTO {db:Identifier}.tool_invocations
  (call_id, task_id, tool_id, agent_id, orchestrator, instance_id, args, status, duration_ms,
   result_summary, error, cost_usd, tokens_used, created_at, fingerprint, source, ingested_at)
WITH
  number AS n,
  intDiv(n, {per_task:UInt64}) AS t,
  n % {per_task:UInt64} AS i,
  sipHash64('h', n) AS h,
  if(h % 100 < 70, ${sqlList(CHAIN)}[1 + i % 4], ${sqlList(OTHERS)}[1 + intDiv(h, 100) % 8]) AS tool,
  intDiv(h, 100000000) % 1000 AS s,
  multiIf(s < 920, 'success', s < 950, 'timeout', s < 980, 'error', s < 992, 'rate_limited', 'invalid_input') AS st,
  (intDiv(h, 100000000000) % 1000000 + 0.5) / 1000000 AS u,
  (sipHash64('c', n) % 1000000 + 0.5) / 1000000 AS u2,
  transform(tool, ['search_web', 'fetch_url', 'python_execute', 'create_chart', 'llm_summarize', 'image_generate'], [300, 500, 800, 400, 1500, 4000], 200) AS scale,
  least(toUInt64(scale * pow(u, -0.6)), 600000) AS dur,
  sipHash64('d', n) % 100 < 12 AS dup,
  toDateTime64({base:DateTime64(3, 'UTC')}, 3, 'UTC')
    + toIntervalMillisecond(sipHash64('t', t) % ({span_ms:UInt64} - {per_task:UInt64} * ${STEP_MS}) + i * ${STEP_MS} + intDiv(h, 100000) % 15000) AS ts,
  if(dup, concat('{"query": "popular ', toString(sipHash64('k', n) % 20000), '"}'),
          concat('{"page": ', toString(i % 5), ', "query": "q', toString(n), ' caf\\\\u00e9"}')) AS a
SELECT
  reinterpretAsUUID(sipHash128('call', n)),
  concat('task-', leftPad(toString(t), 7, '0')),
  tool,
  if(h % 10 = 0, ${sqlList(AGENTS)}[1 + intDiv(h, 10) % 8], ${sqlList(AGENTS)}[1 + sipHash64('a', t) % 8]),
  ['websocket', 'kernel', 'gateway', 'scheduler'][1 + sipHash64('o', t) % 4],
  concat(['websocket', 'kernel', 'gateway', 'scheduler'][1 + sipHash64('o', t) % 4], '-', toString(t % 3)),
  a,
  st,
  if(st = 'timeout', 30000 + dur % 5000, dur),
  concat('{"result_count": ', toString(h % 20), '}'),
  multiIf(st = 'success', NULL, st = 'timeout', 'timeout after 30000 ms', st = 'rate_limited', 'rate limit exceeded (429)',
          st = 'invalid_input', 'invalid input: missing field ''url''',
          ['HTTP 503 Service Unavailable', 'HTTP 404 Not Found', 'connection reset by peer', 'ZeroDivisionError: division by zero'][1 + h % 4]),
  multiIf(tool = 'image_generate', round(0.04 * pow(u2, -0.9), 6), tool = 'llm_summarize', round(0.01 * pow(u2, -0.7), 6),
          tool IN ('search_web', 'vector_search', 'translate_text'), round(0.005 * pow(u2, -0.3), 6), NULL),
  if(tool IN ('llm_summarize', 'translate_text'),
     concat('{"input_tokens": ', toString(h % 4000), ', "output_tokens": ', toString(h % 700), '}'), NULL),
  ts,
  ${FP("sipHash128('fp', n)")},
  'bench',
  -- ingested a few seconds after the call, as through the pipeline (the indexers key on it)
  ts + toIntervalMillisecond(500 + sipHash64('i', n) % 5000)
FROM numbers({start:UInt64}, {count:UInt64})`;

/** INSERT of the outputs of tasks [lo, hi). */
// Outputs of ~60% of the successful calls of the tools that produce artifacts; one in five is
// an identical output (a shared content hash). The ingest writer stamps an output with its
// call's task when it saw the call first; 1 in 100 is left unstamped (NULL) here, as an output that
// reached a worker which had not seen its call (the task view finds those by call_id).
const OUTPUTS_SQL = `
INSERT INTO {db:Identifier}.tool_outputs
  (output_id, call_id, task_id, tool_id, content_type, content_hash, size_bytes, sample, created_at, fingerprint, source, ingested_at)
WITH sipHash64('o', call_id) AS h, h % 100 < 20 AS shared,
  if(shared, concat('shared ', tool_id, ' ', toString(intDiv(h, 100) % 2000)), concat('content ', toString(call_id))) AS key,
  transform(tool_id, ['search_web', 'fetch_url', 'python_execute', 'create_chart', 'sql_query', 'llm_summarize'],
                     ['json', 'html', 'text', 'chart_id', 'csv', 'text'], 'text') AS ctype
SELECT
  reinterpretAsUUID(sipHash128('out', call_id)), call_id, if(sipHash64('u', call_id) % 100 = 0, NULL, task_id), tool_id, ctype,
  lower(hex(SHA256(key))),
  600 + intDiv(h, 1000) % 20000,
  if(ctype = 'chart_id', concat('chart-', substring(hex(SHA256(key)), 1, 16)),
     substring(repeat(concat('{"title": "', key, '", "url": "https://example.com/', toString(h % 997), '", "snippet": "lorem ipsum dolor"}, '), 12), 1, 500)),
  created_at + toIntervalMillisecond(duration_ms),
  ${FP("sipHash128('fpo', call_id)")}, 'bench', ingested_at + toIntervalMillisecond(duration_ms)
FROM {db:Identifier}.tool_invocations
WHERE task_id >= {lo:String} AND task_id < {hi:String}
  AND status = 'success' AND tool_id IN ('search_web', 'fetch_url', 'python_execute', 'create_chart', 'sql_query', 'llm_summarize')
  AND sipHash64('p', call_id) % 10 < 6`;

/** INSERT of the emitted dependencies of tasks [lo, hi). */
// One dependency per consecutive pair of a task's calls (the only pairs within 60 s here).
const WORKFLOWS_SQL = `
INSERT INTO {db:Identifier}.tool_workflows
  (task_id, preceding_call_id, succeeding_call_id, preceding_tool_id, succeeding_tool_id, time_delta_ms, data_flow, origin, fingerprint, source)
SELECT task_id, prev_call, call_id, prev_tool, tool_id, toUInt32(toUnixTimestamp64Milli(created_at) - toUnixTimestamp64Milli(prev_at)),
       if(prev_tool = 'search_web' AND tool_id = 'fetch_url', 'url from search results', NULL), 'emitted',
       ${FP("sipHash128('fpw', call_id)")}, 'bench'
FROM (
  SELECT task_id, call_id, tool_id, created_at,
         lagInFrame(call_id) OVER w AS prev_call, lagInFrame(tool_id) OVER w AS prev_tool,
         lagInFrame(created_at) OVER w AS prev_at, row_number() OVER w AS rn
  FROM {db:Identifier}.tool_invocations
  WHERE task_id >= {lo:String} AND task_id < {hi:String}
  WINDOW w AS (PARTITION BY task_id ORDER BY created_at, call_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
WHERE rn > 1`;

const VIOLATIONS_SQL = `
INSERT INTO {db:Identifier}.violations (violation_key, invariant, packet_type, ids, detail, detected_at)
SELECT concat('bench-', toString(number)), ['I4', 'I8', 'I9', 'I10', 'I11'][1 + number % 5],
       ['tool_call', 'output_artifact', 'tool_dependency', 'tool_call', 'tool_call'][1 + number % 5],
       [toString(reinterpretAsUUID(sipHash128('call', number * 97)))], concat('generated violation ', toString(number)),
       toDateTime64({base:DateTime64(3, 'UTC')}, 3, 'UTC') + toIntervalMillisecond(sipHash64('v', number) % {span_ms:UInt64})
FROM numbers(20000)`;

/** task_id of task number t. */
export const taskKey = (t: number) => `task-${String(t).padStart(7, '0')}`;

/** Reuses the bench database when it holds this shape, else (re)builds it. */
export async function ensureBenchData(ch: ClickHouseClient, db: string, shape: BenchShape, log: (s: string) => void): Promise<BenchData> {
  const meta = await readMeta(ch, db);
  let built = false;
  if (!meta || meta.shape !== JSON.stringify({ ...shape, generator: GENERATOR })) {
    await build(ch, db, shape, log);
    built = true;
  } else {
    log(`reusing ${db} (built ${meta.built_at})`);
  }
  // Bring the schema up to date: a reused database gets new migrations (projections, indexes).
  await migrate(createClickHouseDoor(ch, db), { retentionDays: RETENTION });
  const m = await readMeta(ch, db);
  if (!m) throw new Error('bench metadata missing after build');
  await waitForMutations(ch, db, log);
  // What `serve` does every 10 s: bring the dedup index up to date (the first run indexes everything).
  const t0 = Date.now();
  const run = await refreshDedupIndex(createClickHouseDoor(ch, db));
  log(`  dedup index: ${run.scanned} calls looked at, ${run.copied} copied in ${Math.round((Date.now() - t0) / 100) / 10} s`);
  if (built) await ch.command({ query: 'OPTIMIZE TABLE {db:Identifier}.dedup_repeats FINAL', query_params: { db } });
  // Tasks spread over the whole range (and so over every part), in a scrambled order.
  const taskIds = Array.from({ length: 50 }, (_, k) => taskKey(Math.floor(((k * 7919) % 50) * (shape.tasks / 50))));
  return { from: m.from, to: m.to, tools: [...CHAIN, ...OTHERS], agents: AGENTS, taskIds, built };
}

/** Waits until background mutations (projections and columns materialized by a migration) are done. */
export async function waitForMutations(ch: ClickHouseClient, db: string, log: (s: string) => void): Promise<void> {
  for (let waited = 0; ; waited += 2) {
    const rs = await ch.query({
      query: 'SELECT count() AS n FROM system.mutations WHERE database = {db:String} AND NOT is_done',
      query_params: { db },
      format: 'JSONEachRow',
    });
    const [row] = await rs.json<{ n: number }>();
    if (Number(row?.n ?? 0) === 0) return;
    if (waited % 30 === 0) log(`  waiting for ${row?.n} schema mutation(s) to finish (${waited} s)`);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

async function readMeta(ch: ClickHouseClient, db: string) {
  try {
    const rs = await ch.query({ query: 'SELECT shape, built_at, from, to FROM {db:Identifier}.bench_meta LIMIT 1', query_params: { db }, format: 'JSONEachRow' });
    return (await rs.json<{ shape: string; built_at: string; from: string; to: string }>())[0];
  } catch {
    return undefined;
  }
}

/**
 * What every generated history starts with: `db` dropped and made again at the current schema,
 * the calls per task, and the range — ending at the start of today (UTC), so it stays within
 * retention for weeks.
 */
export async function freshHistory(ch: ClickHouseClient, db: string, shape: BenchShape): Promise<{ perTask: number; spanMs: number; baseMs: number }> {
  await ch.command({ query: 'DROP DATABASE IF EXISTS {db:Identifier}', query_params: { db } });
  const door = createClickHouseDoor(ch, db);
  await migrate(door, { retentionDays: RETENTION });
  // The window aggregates' views count the calls ingested from their cutover on (migration 015),
  // which the migration set to now; a history is inserted with ingested_at in the past. The
  // database is still empty, so moving the cutover to the epoch lets the views count every row
  // once, as if the history had come through ingest.
  await cutoverAtEpoch(door);
  const spanMs = shape.days * 86_400_000;
  const end = new Date();
  end.setUTCHours(0, 0, 0, 0);
  return { perTask: Math.floor(shape.invocations / shape.tasks), spanMs, baseMs: end.getTime() - spanMs };
}

/**
 * Inserts the calls chunk by chunk of {@link CHUNK_TASKS} tasks with `invocationsSql` (numbers
 * `start`, `count`), then the outputs and dependencies of those tasks; logs the progress.
 */
export async function insertChunks(ch: ClickHouseClient, shape: BenchShape, invocationsSql: string, params: Record<string, unknown> & { per_task: number }, log: (s: string) => void, t0: number): Promise<void> {
  const perTask = params.per_task;
  for (let t = 0; t < shape.tasks; t += CHUNK_TASKS) {
    const tasks = Math.min(CHUNK_TASKS, shape.tasks - t);
    await ch.command({ query: invocationsSql, query_params: { ...params, start: t * perTask, count: tasks * perTask } });
    const range = { ...params, lo: taskKey(t), hi: taskKey(t + tasks) };
    await ch.command({ query: OUTPUTS_SQL, query_params: range });
    await ch.command({ query: WORKFLOWS_SQL, query_params: range });
    log(`  tasks ${t + tasks}/${shape.tasks}: ${Math.round((Date.now() - t0) / 1000)} s`);
  }
}

async function build(ch: ClickHouseClient, db: string, shape: BenchShape, log: (s: string) => void): Promise<void> {
  const t0 = Date.now();
  const { perTask, spanMs, baseMs } = await freshHistory(ch, db, shape);
  const base = new Date(baseMs).toISOString().replace('T', ' ').replace('Z', '');
  const params = { db, per_task: perTask, span_ms: spanMs, base };
  await insertChunks(ch, shape, INVOCATIONS_SQL, params, log, t0);
  await ch.command({ query: VIOLATIONS_SQL, query_params: params });
  log(`  inserted in ${Math.round((Date.now() - t0) / 1000)} s; merging parts (OPTIMIZE … FINAL)`);
  // A long-running table is mostly merged; benchmark that steady state, not a pile of fresh parts.
  for (const table of ['tool_invocations', 'tool_outputs', 'tool_workflows', 'task_rows', 'violations']) {
    await ch.command({ query: 'OPTIMIZE TABLE {db:Identifier}.{t:Identifier} FINAL', query_params: { db, t: table } });
  }
  const rs = await ch.query({
    query: `SELECT min(created_at) AS from, max(created_at) AS to FROM {db:Identifier}.tool_invocations`,
    query_params: { db },
    format: 'JSONEachRow',
  });
  const [range] = await rs.json<{ from: string; to: string }>();
  await ch.command({
    query: `CREATE TABLE {db:Identifier}.bench_meta (shape String, built_at DateTime DEFAULT now(), from String, to String) ENGINE = MergeTree ORDER BY tuple()`,
    query_params: { db },
  });
  await ch.insert({
    table: `${db}.bench_meta`,
    values: [{ shape: JSON.stringify({ ...shape, generator: GENERATOR }), from: `${range?.from.replace(' ', 'T')}Z`, to: `${range?.to.replace(' ', 'T')}Z` }],
    format: 'JSONEachRow',
  });
  log(`  built in ${Math.round((Date.now() - t0) / 1000)} s`);
}
