/**
 * Cache simulation (GET /v1/cache/simulation, /v1/cache/ttl-curve): a TTL cache keyed by
 * (tool_id, args_hash) replayed over the calls of the window in created_at order (ties by
 * call_id as text). A call is a hit when an entry of its key is live at its created_at
 * (entry created at s is live on [s, s + ttl)); a call that is not a hit and succeeded creates
 * the entry; hits do not extend it. saved_ms / saved_usd sum the hits' duration_ms / cost_usd
 * (null = 0). Only tools the current manifest declares idempotent are cacheable (the hints'
 * per-tool curve also takes every tool when no manifest is loaded: HINT_TOOLS).
 * The replay is one arrayFold per key, inside ClickHouse; Grafana panels run the same SQL.
 */
import { CREATED_IN_WINDOW, PARAM_DOCS, TOOL_FILTER } from './dashboard-common.ts';
import { CURRENT_MANIFEST, fold, KEY_REPLAYS, RECENT_COPIES } from '../analyzers/cache-replays.ts';
import { DEDUP_OVERLAP_MS } from '../analyzers/dedup-index.ts';
import { DEDUP_LIVE_MAX_ROWS, indexedSince } from './dedup-candidates.ts';
import { toolWindowRows, WINDOW_BOUNDS } from './window-aggregates.ts';
import { chTime, runQuery, windowParams, type QueryContext, type QuerySpec, type StatementRunner, type TimeWindow } from './sql.ts';
import type { CacheSimulation, TtlCurve } from '../schemas/cache-answers.ts';

/** The TTLs of the curve: 1 min, 5 min, 15 min, 1 h, 6 h, 24 h, 7 d. */
export const CURVE_TTLS_MS = [60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000, 604_800_000] as const;
const CURVE_LABELS = "'1m', '5m', '15m', '1h', '6h', '24h', '7d'";
/** The suggested TTL reaches this share of the 7-day TTL's savings. */
export const SUGGESTED_SHARE = 0.9;

/** A call of the window and of the tool filter (shared with cache-savings.ts). */
export const IN_SCOPE = `${CREATED_IN_WINDOW} AND ${TOOL_FILTER}`;

/** One call as the replay sees it: (created_at ms, call_id as big-endian bytes, which sort like its text, succeeded, duration_ms, cost_usd). */
const CALL = (withTask: boolean) =>
  `(toUnixTimestamp64Milli(created_at), UUIDToNum(call_id), status = 'success', duration_ms, ifNull(cost_usd, 0)${withTask ? ', task_id' : ''})`;

/**
 * The keys that can hit, each with its calls in call order: the keys of `tools` seen more than
 * once in the window, found in two passes over the window's calls. A key is (tool_id, args):
 * args_hash is the SHA-256 of the stored args (I5; migration 022 derives it from them), so
 * grouping by args is grouping by args_hash without hashing every call. Almost every key is
 * unique, so the keys that repeat are found first on an 8-byte hash of (tool_id, args) (a
 * collision only adds a key, which is then grouped by its real (tool_id, args) and dropped if
 * single), and only their calls are gathered. The hash is computed, not read from args_key:
 * args_key (migration 002) is not in the by_tool projection, which a one-tool simulation reads
 * (10 M calls: ~0.6 s against ~1.2 s). `withTask` adds each call's task_id as a sixth element (the
 * fold reads only the first five).
 */
export const REPEATED_KEYS = (tools: string, withTask = false) => `SELECT tool_id, arraySort(groupArray(${CALL(withTask)})) AS calls
  FROM {db:Identifier}.tool_invocations
  WHERE ${IN_SCOPE} AND tool_id IN ${tools}
    AND cityHash64(tool_id, args) IN (SELECT cityHash64(tool_id, args) AS h FROM {db:Identifier}.tool_invocations WHERE ${IN_SCOPE} AND tool_id IN ${tools} GROUP BY h HAVING count() > 1)
  GROUP BY tool_id, args
  HAVING count() > 1`;

/** The keys of the calls ingested after `since` (the dedup indexer's watermark minus its overlap). */
const LIVE_KEYS = "(SELECT args_key FROM {db:Identifier}.tool_invocations WHERE ingested_at > {since:DateTime64(3, 'UTC')})";
const OVERLAP_DOC = 'the dedup indexer overlap, ms: kept replays are trusted for the keys last copied at least this long before its newest recorded check';
const SINCE_DOC = 'the dedup indexer watermark minus its overlap: calls of keys ingested after it come from the calls themselves';
const IN_WINDOW_MS = "x -> x.1 >= toUnixTimestamp64Milli({from:DateTime64(3, 'UTC')}) AND x.1 < toUnixTimestamp64Milli({to:DateTime64(3, 'UTC')})";

/**
 * The same keys and calls without grouping the window's calls: the keys the dedup indexer found
 * repeated, with their calls already grouped per key (cache_key_calls, migration 019), and the
 * keys of the calls ingested after `since` gathered from the calls themselves. A key that repeats
 * either has every call indexed (no call of it was ingested after `since`) or is a live key, which
 * brings all its calls: exact at any lag of the indexer, as the dedup candidates' statement.
 * Indexed keys are told apart by two 64-bit hashes (args_key, check_key). The merged array is
 * named apart from the column it merges (an alias shadows a column in ClickHouse).
 *
 * The live keys' calls are found by args_key alone first (PREWHERE), and grouped by args_hash
 * (the SHA-256 of args, I5) rather than args: left to the optimizer, the window and tool
 * conditions were read first for every call of the window, and args for every match. 30 M calls,
 * 77,654 keys ingested after `since`, alone: this branch 1.7–2.0 s → 0.49–0.63 s, same calls.
 * The indexed keys' conditions are PREWHERE too: `except` leaves out most keys (the kept replays),
 * whose arrays are then not even read (30 M calls: the simulation ~390 → ~260 ms alone).
 */
const INDEXED_REPEATED_KEYS = (tools: string, except = '') => `SELECT tool_id, key_calls AS calls FROM (
    SELECT tool_id, arraySort(arrayFilter(${IN_WINDOW_MS}, groupArrayMerge(ck.calls))) AS key_calls
    FROM {db:Identifier}.cache_key_calls AS ck
    PREWHERE ${TOOL_FILTER} AND tool_id IN ${tools} AND args_key NOT IN ${LIVE_KEYS}${except}
    GROUP BY tool_id, args_key, check_key
  ) WHERE length(key_calls) > 1
  UNION ALL
  SELECT tool_id, arraySort(groupArray(${CALL(false)})) AS calls
  FROM {db:Identifier}.tool_invocations
  PREWHERE args_key IN ${LIVE_KEYS}
  WHERE ${IN_SCOPE} AND tool_id IN ${tools}
  GROUP BY tool_id, args_hash
  HAVING count() > 1`;

/** The TTL a tool is simulated at: `ttl_ms` when ≥ 0, else its manifest's cache_ttl_ms (null = 0). */
const TTL_OF = (m: string) => `if({ttl_ms:Int64} >= 0, {ttl_ms:Int64}, toInt64(ifNull(${m}.cache_ttl_ms, 0)))`;
const CACHEABLE_TOOLS = `(SELECT tool_id FROM (${CURRENT_MANIFEST}) AS cm WHERE cm.idempotent = 1 AND ${TTL_OF('cm')} > 0)`;
/** The tools the current manifest declares idempotent (shared with cache-savings.ts). */
export const IDEMPOTENT_TOOLS = `(SELECT tool_id FROM (${CURRENT_MANIFEST}) WHERE idempotent = 1)`;
const SIMULATION_DESCRIPTION =
  "Per tool: calls, cache hits and what they saved under a TTL cache keyed by (tool_id, args_hash) at the current manifest's cache_ttl_ms (or ttl_ms when ≥ 0); only idempotent tools are cacheable.";
/**
 * Calls per tool of the window (one tool, or all when tool_id is ''), from the window aggregates
 * (tool_days, tool_hours) and the calls of the edge hours (window-aggregates.ts): a few hundred
 * rows whatever the store holds, where counting the calls themselves reads every call of the window.
 * Needs WINDOW_BOUNDS in the statement's WITH clause.
 */
const CALLS_PER_TOOL = `SELECT tool_id, sum(n) AS calls FROM (${toolWindowRows('calls AS n', 'count()', TOOL_FILTER)}) GROUP BY tool_id HAVING calls > 0`;

/**
 * The keys of `tools` whose replay kept by the dedup indexer (analyzers/cache-replays.ts) answers
 * for them: at the TTL simulated, not a live key nor one copied since the indexer's last recorded
 * check (RECENT_COPIES), and every call of the key in the window, or no hit at all (then none in
 * any window either). In the window means from the later of `from` and the oldest stored call (lo_ms
 * of WINDOW_BOUNDS): a key whose first calls expired is replayed on the read from what is left.
 */
const TRUE_REPLAYS = (tools: string) => `SELECT r.tool_id AS tool_id, r.args_key AS args_key, r.hits AS hits, r.saved_ms AS saved_ms, r.saved_usd AS saved_usd
  FROM (${KEY_REPLAYS(tools)} AND ${TOOL_FILTER} AND args_key NOT IN ${LIVE_KEYS} AND (tool_id, args_key) NOT IN ${RECENT_COPIES}
    AND (hits = 0 OR (toUnixTimestamp64Milli(first_at) >= lo_ms AND last_at < {to:DateTime64(3, 'UTC')}))) AS r
  LEFT JOIN (${CURRENT_MANIFEST}) AS rm ON rm.tool_id = r.tool_id
  WHERE r.ttl_ms = ${TTL_OF('rm')}`;
/** The indexed keys of `tools` replayed on the read: those without a true replay. */
const UNREPLAYED_KEYS = (tools: string) => INDEXED_REPEATED_KEYS(tools, ` AND (tool_id, args_key) NOT IN (SELECT tool_id, args_key FROM (${TRUE_REPLAYS(tools)}))`);
/** The kept replays' hits and savings. */
const KEPT_REPLAYS = (tools: string) => `SELECT tool_id, hits, saved_ms, saved_usd FROM (${TRUE_REPLAYS(tools)})`;

/** Hits and savings per tool: the keys replayed here (`keys`) and, indexed, the replays kept (`replays`). */
const TOOL_HITS = (keys: (tools: string) => string, replays?: (tools: string) => string) => `SELECT tool_id, sum(hits) AS hits, sum(saved_ms) AS saved_ms, sum(saved_usd) AS saved_usd
  FROM (
    SELECT tool_id, r.2 AS hits, r.3 AS saved_ms, r.4 AS saved_usd FROM (
      SELECT k.tool_id AS tool_id, ${fold(TTL_OF('km'))} AS r
      FROM (${keys(CACHEABLE_TOOLS)}) AS k
      LEFT JOIN (${CURRENT_MANIFEST}) AS km ON km.tool_id = k.tool_id
    )${
      replays
        ? `
    UNION ALL
    ${replays(CACHEABLE_TOOLS)}`
        : ''
    }
  )
  GROUP BY tool_id`;

const SIMULATION_SQL = (hits: string) => `WITH ${WINDOW_BOUNDS}
SELECT c.tool_id AS tool_id, m.idempotent = 1 AND ${TTL_OF('m')} > 0 AS cacheable, ${TTL_OF('m')} AS ttl_ms, c.calls AS calls,
  h.hits AS hits, h.saved_ms AS saved_ms, h.saved_usd AS saved_usd
FROM (${CALLS_PER_TOOL}) AS c
LEFT JOIN (${CURRENT_MANIFEST}) AS m ON m.tool_id = c.tool_id
LEFT JOIN (${hits}) AS h ON h.tool_id = c.tool_id
ORDER BY saved_ms DESC, tool_id
SETTINGS join_use_nulls = 0`;
const SIMULATION_PARAMS = { ...PARAM_DOCS, ttl_ms: "the TTL to simulate, ms; -1 for each tool's manifest cache_ttl_ms" };

/** Simulation per tool at the manifest's TTL, or `ttl_ms` when it is ≥ 0 (two passes over the window's calls). */
export const CACHE_SIMULATION: QuerySpec = { name: 'cache_simulation', description: SIMULATION_DESCRIPTION, sql: SIMULATION_SQL(TOOL_HITS(REPEATED_KEYS)), params: SIMULATION_PARAMS };

/** A two-pass statement's indexed twin: the same answer from the dedup index's calls per key and the keys ingested after `since`. */
const indexedTwin = (twoPass: QuerySpec, sql: string): QuerySpec => ({
  name: `${twoPass.name}_indexed`,
  description: `${twoPass.description} From the dedup index's calls per key and the calls of keys ingested since \`since\`.`,
  sql,
  params: { ...twoPass.params, since: SINCE_DOC },
  // Not optimize_aggregation_in_order: grouping cache_key_calls by its sorting key in order was
  // no faster at 30 M calls (arrays alone 560–694 ms in order, 519–538 ms hashed).
});

const SIMULATION_TWIN = indexedTwin(CACHE_SIMULATION, SIMULATION_SQL(TOOL_HITS(UNREPLAYED_KEYS, KEPT_REPLAYS)));
/** {@link CACHE_SIMULATION} from the dedup index, summing the kept replays. */
export const CACHE_SIMULATION_INDEXED: QuerySpec = {
  ...SIMULATION_TWIN,
  description: `${SIMULATION_TWIN.description} Keys whose replay the indexer kept are summed, not replayed.`,
  params: { ...SIMULATION_TWIN.params, overlap_ms: OVERLAP_DOC },
};

const CURVE_DESCRIPTION = "Calls, hits and savings of the idempotent tools (one, or every one when tool_id is '') at the TTLs 1 min, 5 min, 15 min, 1 h, 6 h, 24 h and 7 d.";
const CURVE_SQL = (keys: (tools: string) => string) => `WITH ${WINDOW_BOUNDS}
SELECT t.i AS i, [${CURVE_TTLS_MS.join(', ')}][t.i] AS ttl_ms, [${CURVE_LABELS}][t.i] AS ttl,
  (SELECT sum(calls) FROM (${CALLS_PER_TOOL}) WHERE {tool_id:String} != '' OR tool_id IN ${IDEMPOTENT_TOOLS}) AS calls,
  h.hits AS hits, h.saved_ms AS saved_ms, h.saved_usd AS saved_usd
FROM (SELECT arrayJoin(range(1, ${CURVE_TTLS_MS.length + 1})) AS i) AS t
LEFT JOIN (
  SELECT i, sum(res[i].2) AS hits, sum(res[i].3) AS saved_ms, sum(res[i].4) AS saved_usd
  FROM (SELECT arrayMap(L -> ${fold('L')}, [${CURVE_TTLS_MS.join(', ')}]) AS res FROM (${keys(IDEMPOTENT_TOOLS)}))
  ARRAY JOIN arrayEnumerate(res) AS i
  GROUP BY i
) AS h ON h.i = t.i
ORDER BY ttl_ms
SETTINGS join_use_nulls = 0`;
const CURVE_PARAMS = { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, tool_id: "a tool, or '' for every idempotent tool" };

/** Savings at each TTL of the curve for one tool, or every idempotent tool when tool_id is '' (two passes over the window's calls). */
export const CACHE_TTL_CURVE: QuerySpec = { name: 'cache_ttl_curve', description: CURVE_DESCRIPTION, sql: CURVE_SQL(REPEATED_KEYS), params: CURVE_PARAMS };

/** {@link CACHE_TTL_CURVE} from the dedup index. */
export const CACHE_TTL_CURVE_INDEXED = indexedTwin(CACHE_TTL_CURVE, CURVE_SQL(INDEXED_REPEATED_KEYS));

/** Parameters of {@link cacheSimulation}. */
export interface CacheSimulationParams {
  toolId?: string;
  /** The TTL to simulate for every tool; absent: each tool's manifest cache_ttl_ms. */
  ttlMs?: number;
  window: TimeWindow;
  /** Read the dedup index while it lags by at most this many calls (default DEDUP_LIVE_MAX_ROWS; 0 = never). */
  liveMaxRows?: number;
  /** The overlap the dedup indexer runs with (default DEDUP_OVERLAP_MS). */
  indexOverlapMs?: number;
}

/** Parameters of {@link ttlCurve}. */
export interface TtlCurveParams {
  /** Absent: every tool the current manifest declares idempotent, together. */
  toolId?: string;
  window: TimeWindow;
  /** As {@link CacheSimulationParams.liveMaxRows}. */
  liveMaxRows?: number;
  /** As {@link CacheSimulationParams.indexOverlapMs}. */
  indexOverlapMs?: number;
}

type Num = number | string;
const rate = (hits: number, calls: number) => (calls > 0 ? hits / calls : 0);

/**
 * The statement to run and its `since`: the indexed one while the dedup indexer is close enough
 * behind (its tail of live keys is then small), else the two-pass one; both answer the same.
 */
async function pick(ch: StatementRunner, db: string, specs: [twoPass: QuerySpec, indexed: QuerySpec], p: CacheSimulationParams | TtlCurveParams, ctx: QueryContext): Promise<[QuerySpec, { since?: string }]> {
  const since = await indexedSince(ch, db, p.liveMaxRows ?? DEDUP_LIVE_MAX_ROWS, p.indexOverlapMs ?? DEDUP_OVERLAP_MS, ctx);
  return since === undefined ? [specs[0], {}] : [specs[1], { since: chTime(since) }];
}

/** Runs the simulation. */
export async function cacheSimulation(ch: StatementRunner, db: string, p: CacheSimulationParams, ctx: QueryContext): Promise<CacheSimulation> {
  const [spec, since] = await pick(ch, db, [CACHE_SIMULATION, CACHE_SIMULATION_INDEXED], p, ctx);
  const rows = await runQuery<{ tool_id: string; cacheable: Num; ttl_ms: Num; calls: Num; hits: Num; saved_ms: Num; saved_usd: Num }>(
    ch,
    spec,
    { db, tool_id: p.toolId ?? '', ttl_ms: p.ttlMs ?? -1, ...windowParams(p.window), ...since, ...(since.since === undefined ? {} : { overlap_ms: p.indexOverlapMs ?? DEDUP_OVERLAP_MS }) },
    ctx,
  );
  const tools = rows.map((r) => {
    const calls = Number(r.calls);
    const hits = Number(r.hits);
    const ttl = Number(r.ttl_ms);
    return { tool_id: r.tool_id, ttl_ms: ttl > 0 || p.ttlMs !== undefined ? ttl : null, cacheable: Number(r.cacheable) === 1, calls, hits, hit_rate: rate(hits, calls), saved_ms: Number(r.saved_ms), saved_usd: Number(r.saved_usd) };
  });
  const sum = (f: (t: (typeof tools)[number]) => number) => tools.reduce((s, t) => s + f(t), 0);
  const calls = sum((t) => t.calls);
  const hits = sum((t) => t.hits);
  return { tools, totals: { calls, hits, hit_rate: rate(hits, calls), saved_ms: sum((t) => t.saved_ms), saved_usd: sum((t) => t.saved_usd) } };
}

/** The shortest TTL whose savings reach {@link SUGGESTED_SHARE} of the longest TTL's (ms, and usd when it saves any). */
export function suggestedTtl(points: ReadonlyArray<{ ttl_ms: number; saved_ms: number; saved_usd: number }>): number | null {
  const longest = points[points.length - 1];
  if (!longest || (longest.saved_ms <= 0 && longest.saved_usd <= 0)) return null;
  const reaches = (v: number, of: number) => of <= 0 || v >= SUGGESTED_SHARE * of - 1e-9;
  return points.find((p) => reaches(p.saved_ms, longest.saved_ms) && reaches(p.saved_usd, longest.saved_usd))?.ttl_ms ?? null;
}

/** Runs the TTL curve of one tool. */
export async function ttlCurve(ch: StatementRunner, db: string, p: TtlCurveParams, ctx: QueryContext): Promise<TtlCurve> {
  const [spec, since] = await pick(ch, db, [CACHE_TTL_CURVE, CACHE_TTL_CURVE_INDEXED], p, ctx);
  const [rows, idempotent] = await Promise.all([
    runQuery<{ ttl_ms: Num; calls: Num; hits: Num; saved_ms: Num; saved_usd: Num }>(ch, spec, { db, tool_id: p.toolId ?? '', ...windowParams(p.window), ...since }, ctx),
    runQuery<{ i: Num }>(ch, TOOL_IDEMPOTENT, { db, tool_id: p.toolId ?? '' }, ctx),
  ]);
  const cacheable = idempotent.some((r) => Number(r.i) === 1);
  const byTtl = new Map(rows.map((r) => [Number(r.ttl_ms), r]));
  const calls = Number(rows[0]?.calls ?? 0);
  const points = (calls > 0 ? CURVE_TTLS_MS : []).map((ttl) => {
    const r = byTtl.get(ttl);
    const hits = Number(r?.hits ?? 0);
    return { ttl_ms: ttl, hits, hit_rate: rate(hits, calls), saved_ms: Number(r?.saved_ms ?? 0), saved_usd: Number(r?.saved_usd ?? 0) };
  });
  return { tool_id: p.toolId ?? null, cacheable, calls, points, suggested_ttl_ms: cacheable ? suggestedTtl(points) : null };
}

/** Whether the current manifest declares a tool idempotent. */
export const TOOL_IDEMPOTENT: QuerySpec = {
  name: 'tool_idempotent',
  description: "Whether the current manifest declares the tool idempotent (1) or not / not at all (no row or 0); with tool_id '', every tool's flag.",
  sql: `SELECT idempotent AS i FROM (${CURRENT_MANIFEST}) WHERE {tool_id:String} = '' OR tool_id = {tool_id:String}`,
  params: { db: PARAM_DOCS.db, tool_id: "the tool, or '' for every tool" },
};
