/**
 * The "Cost per task" and "Cost totals" panels (queries/dashboard-cost.ts) answer as the
 * statements they replaced, on a
 * fixed database: calls of many tasks over four days (some exactly on an hour edge or a
 * millisecond before it, some without a task or a cost), inserted in batches, read over windows
 * that start and end inside hours, with every tool and agent (the window aggregates) and with one
 * chosen (the calls). Two oracles: the former statement, kept here verbatim, and the sums computed
 * in plain JavaScript. Costs are multiples of 1/1024, so every sum is exact in any order.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { COST_PER_TASK, COST_TOTALS } from '../../../queries/dashboard-cost.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { freshDatabase } from '../../helpers/clickhouse.ts';
import { chTime, insertCalls, rawCall, rng, type RawCall } from '../../helpers/raw-calls.ts';
import { windowsOver } from '../../helpers/window-oracle.ts';

/** The statement the panel ran before it read task_hours. */
const FORMER = `SELECT
  task_id,
  sum(ifNull(cost_usd, 0)) AS total_cost_usd,
  count() AS calls,
  countIf(status != 'success') AS failures,
  arrayStringConcat(arraySort(groupUniqArray(toString(tool_id))), ', ') AS tools,
  min(created_at) AS first_call,
  max(created_at) AS last_call
FROM {db:Identifier}.tool_invocations
WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND ({tool_id:String} = '' OR tool_id = {tool_id:String})
  AND ({agent_id:String} = '' OR agent_id = {agent_id:String})
  AND task_id != ''
GROUP BY task_id
ORDER BY total_cost_usd DESC, task_id
LIMIT {limit:UInt32}`;

/** The totals statement before it read the window aggregates. */
const FORMER_TOTALS = `SELECT
  sum(ifNull(cost_usd, 0)) AS total_cost_usd,
  countIf(cost_usd > {threshold_usd:Float64}) AS expensive_calls,
  sumIf(assumeNotNull(cost_usd), cost_usd > {threshold_usd:Float64}) AS expensive_cost_usd,
  uniqExactIf(task_id, task_id != '') AS tasks,
  if(tasks = 0, NULL, sumIf(ifNull(cost_usd, 0), task_id != '') / tasks) AS avg_cost_per_task_usd
FROM {db:Identifier}.tool_invocations
WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND ({tool_id:String} = '' OR tool_id = {tool_id:String})
  AND ({agent_id:String} = '' OR agent_id = {agent_id:String})`;

const HOUR = 3_600_000;
const TOOLS = ['fetch_url', 'search_web', 'sql_query', 'python_execute'];
const AGENTS = ['Coder', 'Planner', 'Writer'];
const STATUSES = ['success', 'success', 'success', 'error', 'timeout'] as const;

type Row = { task_id: string; total_cost_usd: number; calls: number; failures: number; tools: string; first_call: string; last_call: string };
const plain = (rows: Row[]) => rows.map((r) => ({ ...r, total_cost_usd: Number(r.total_cost_usd), calls: Number(r.calls), failures: Number(r.failures) }));

/** The panel's answer computed from the calls as written. */
function oracle(calls: readonly RawCall[], from: number, to: number, tool: string, agent: string, limit: number): Row[] {
  const by = new Map<string, RawCall[]>();
  for (const c of calls) {
    if (c.t < from || c.t >= to || c.task_id === '' || (tool && c.tool_id !== tool) || (agent && c.agent_id !== agent)) continue;
    const list = by.get(c.task_id) ?? [];
    list.push(c);
    by.set(c.task_id, list);
  }
  const rows = [...by].map(([task_id, cs]) => ({
    task_id,
    total_cost_usd: cs.reduce((s, c) => s + (c.cost_usd ?? 0), 0),
    calls: cs.length,
    failures: cs.filter((c) => c.status !== 'success').length,
    tools: [...new Set(cs.map((c) => c.tool_id))].sort().join(', '),
    first_call: chTime(Math.min(...cs.map((c) => c.t))),
    last_call: chTime(Math.max(...cs.map((c) => c.t))),
  }));
  rows.sort((a, b) => b.total_cost_usd - a.total_cost_usd || (a.task_id < b.task_id ? -1 : a.task_id > b.task_id ? 1 : 0));
  return rows.slice(0, limit);
}

type Totals = { total_cost_usd: number; expensive_calls: number; expensive_cost_usd: number; tasks: number; avg_cost_per_task_usd: number | null };
const plainTotals = (rows: Totals[]) =>
  rows.map((r) => ({
    total_cost_usd: Number(r.total_cost_usd),
    expensive_calls: Number(r.expensive_calls),
    expensive_cost_usd: Number(r.expensive_cost_usd),
    tasks: Number(r.tasks),
    avg_cost_per_task_usd: r.avg_cost_per_task_usd === null ? null : Number(r.avg_cost_per_task_usd),
  }));

/** The totals computed from the calls as written. */
function totalsOracle(calls: readonly RawCall[], from: number, to: number, tool: string, agent: string, threshold: number): Totals[] {
  const cs = calls.filter((c) => c.t >= from && c.t < to && (!tool || c.tool_id === tool) && (!agent || c.agent_id === agent));
  const expensive = cs.filter((c) => c.cost_usd !== null && c.cost_usd > threshold);
  const tasked = cs.filter((c) => c.task_id !== '');
  const tasks = new Set(tasked.map((c) => c.task_id)).size;
  const taskCost = tasked.reduce((s, c) => s + (c.cost_usd ?? 0), 0);
  return [
    {
      total_cost_usd: cs.reduce((s, c) => s + (c.cost_usd ?? 0), 0),
      expensive_calls: expensive.length,
      expensive_cost_usd: expensive.reduce((s, c) => s + (c.cost_usd as number), 0),
      tasks,
      avg_cost_per_task_usd: tasks === 0 ? null : taskCost / tasks,
    },
  ];
}

describe('the cost-per-task and cost-totals panels', () => {
  let door: ClickHouseDoor;
  let db: string;
  const calls: RawCall[] = [];
  const start = Math.floor(Date.now() / HOUR) * HOUR - 96 * HOUR;

  beforeAll(async () => {
    const fresh = await freshDatabase('costtask');
    ({ door, db } = fresh);
    const r = rng(47);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)] as T;
    for (let i = 0; i < 2500; i++) {
      const edge = start + Math.floor(r() * 96) * HOUR;
      const t = i % 17 === 0 ? edge : i % 19 === 0 ? edge - 1 : start + Math.floor(r() * 96 * HOUR);
      calls.push(rawCall({ task_id: r() < 0.1 ? '' : `task-${String(Math.floor(r() * 80)).padStart(3, '0')}`, tool_id: pick(TOOLS), agent_id: pick(AGENTS), t, status: pick(STATUSES), cost_usd: r() < 0.3 ? null : Math.floor(r() * 8192) / 1024 }));
    }
    // In batches, out of time order: late calls land in hours already aggregated.
    const shuffled = [...calls].sort(() => r() - 0.5);
    for (let i = 0; i < shuffled.length; i += 400) await insertCalls(fresh.ch, db, shuffled.slice(i, i + 400));
  });

  it('answer as the former statements and as JavaScript, with every tool and agent or one chosen', async () => {
    const windows = windowsOver(start, start + 96 * HOUR, calls.map((c) => c.t), 5, 14);
    for (const [from, to] of windows) {
      for (const [tool, agent] of [['', ''], ['search_web', ''], ['', 'Planner']] as const) {
        for (const limit of [100, 5]) {
          const params = { db, from: chTime(from), to: chTime(to), tool_id: tool, agent_id: agent, limit };
          const at = `[${new Date(from).toISOString()}, ${new Date(to).toISOString()}) tool '${tool}' agent '${agent}' limit ${limit}`;
          const panel = plain(await door.read<Row>(COST_PER_TASK, params, DEFAULT_QUERY_CONTEXT));
          expect(panel, at).toEqual(plain(await door.read<Row>({ name: 'former', sql: FORMER }, params, DEFAULT_QUERY_CONTEXT)));
          expect(panel, at).toEqual(oracle(calls, from, to, tool, agent, limit));
        }
        const t = { db, from: chTime(from), to: chTime(to), tool_id: tool, agent_id: agent, threshold_usd: 4 };
        const totals = plainTotals(await door.read<Totals>(COST_TOTALS, t, DEFAULT_QUERY_CONTEXT));
        const at = `totals [${new Date(from).toISOString()}, ${new Date(to).toISOString()}) tool '${tool}' agent '${agent}'`;
        expect(totals, at).toEqual(plainTotals(await door.read<Totals>({ name: 'former', sql: FORMER_TOTALS }, t, DEFAULT_QUERY_CONTEXT)));
        expect(totals, at).toEqual(totalsOracle(calls, from, to, tool, agent, 4));
      }
    }
  });
});
