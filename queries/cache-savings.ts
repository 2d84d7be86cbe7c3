/**
 * What caching would save per tool at its suggested TTL, for the cache-candidate hints: the TTL
 * curve of each tool a hint may suggest caching, with what the tool cost in the window, and the
 * tasks whose calls repeat a key. The replay is cache-simulation.ts's, over the two-pass keys.
 */
import type { CacheStat } from '../analyzers/hint-rules.ts';
import { fold } from '../analyzers/cache-replays.ts';
import { CURVE_TTLS_MS, IDEMPOTENT_TOOLS, IN_SCOPE, REPEATED_KEYS, suggestedTtl } from './cache-simulation.ts';
import { PARAM_DOCS } from './dashboard-common.ts';
import { runQuery, windowParams, type QueryContext, type QuerySpec, type StatementRunner, type TimeWindow } from './sql.ts';

type Num = number | string;

/**
 * The tools an optimization hint may suggest caching: the idempotent ones of the current manifest
 * or, when no manifest is loaded at all, every tool called in the window (nothing says otherwise).
 */
const HINT_TOOLS = `(SELECT tool_id FROM {db:Identifier}.tool_invocations WHERE ${IN_SCOPE}
    AND (tool_id IN ${IDEMPOTENT_TOOLS} OR (SELECT count() FROM {db:Identifier}.tool_manifests) = 0) GROUP BY tool_id)`;

/**
 * The TTL curve of each tool a hint may suggest caching (see HINT_TOOLS), with what the tool cost
 * in the window: the cache-candidate hints (analyzers/hint-rules.ts) weigh savings against these.
 */
export const CACHE_TTL_CURVE_PER_TOOL: QuerySpec = {
  name: 'cache_ttl_curve_per_tool',
  description: "Per tool that may be cached (idempotent in the current manifest; every tool when no manifest is loaded): calls, total duration and cost, and hits and savings at each TTL of the curve.",
  sql: `SELECT c.tool_id AS tool_id, c.calls AS calls, c.total_ms AS total_ms, c.total_usd AS total_usd,
  h.hits AS hits, h.saved_ms AS saved_ms, h.saved_usd AS saved_usd, h.tasks AS tasks
FROM (
  SELECT tool_id, count() AS calls, sum(duration_ms) AS total_ms, sum(ifNull(cost_usd, 0)) AS total_usd
  FROM {db:Identifier}.tool_invocations WHERE ${IN_SCOPE} AND tool_id IN ${HINT_TOOLS} GROUP BY tool_id
) AS c
INNER JOIN (
  SELECT tool_id, sumForEach(arrayMap(r -> r.2, res)) AS hits, sumForEach(arrayMap(r -> r.3, res)) AS saved_ms, sumForEach(arrayMap(r -> r.4, res)) AS saved_usd,
    arraySlice(arraySort(groupUniqArrayArray(key_tasks)), 1, {max_tasks:UInt32}) AS tasks
  FROM (SELECT tool_id, arrayMap(L -> ${fold('L')}, [${CURVE_TTLS_MS.join(', ')}]) AS res, arrayFilter(t -> t != '', arrayMap(x -> x.6, calls)) AS key_tasks FROM (${REPEATED_KEYS(HINT_TOOLS, true)}))
  GROUP BY tool_id
) AS h ON h.tool_id = c.tool_id
ORDER BY tool_id`,
  params: { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, tool_id: "a tool, or '' for every tool", max_tasks: 'how many task ids (sorted) to keep per tool' },
};

/**
 * One tool's row of {@link CACHE_TTL_CURVE_PER_TOOL} at its suggested TTL: exactly what the
 * cache-candidate rule takes (analyzers/hint-rules.ts CacheStat; tasks are those whose calls repeat
 * a key, sorted, at most max_tasks).
 */
export type ToolCacheSavings = CacheStat;

/** Each cacheable tool's savings at its suggested TTL (tools whose longest TTL saves nothing are left out). */
export async function cacheSavingsAtSuggestedTtl(ch: StatementRunner, db: string, p: { window: TimeWindow; maxTasks: number }, ctx: QueryContext): Promise<ToolCacheSavings[]> {
  const rows = await runQuery<{ tool_id: string; calls: Num; total_ms: Num; total_usd: Num; hits: Num[]; saved_ms: Num[]; saved_usd: Num[]; tasks: string[] }>(
    ch,
    CACHE_TTL_CURVE_PER_TOOL,
    { db, tool_id: '', max_tasks: p.maxTasks, ...windowParams(p.window) },
    ctx,
  );
  const out: ToolCacheSavings[] = [];
  for (const r of rows) {
    const points = CURVE_TTLS_MS.map((ttl, i) => ({ ttl_ms: ttl, hits: Number(r.hits[i] ?? 0), saved_ms: Number(r.saved_ms[i] ?? 0), saved_usd: Number(r.saved_usd[i] ?? 0) }));
    const ttl = suggestedTtl(points);
    const at = points.find((x) => x.ttl_ms === ttl);
    if (ttl === null || !at) continue;
    out.push({ tool_id: r.tool_id, calls: Number(r.calls), total_ms: Number(r.total_ms), total_usd: Number(r.total_usd), ttl_ms: ttl, hits: at.hits, saved_ms: at.saved_ms, saved_usd: at.saved_usd, tasks: r.tasks });
  }
  return out;
}
