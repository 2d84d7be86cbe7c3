/**
 * The "Budgets: spend vs limit" panel (queries/dashboard-budgets.ts) answers as the statement it
 * replaced, on a fixed database: calls and model turns of this month (today and earlier days) and
 * of last month, with and without a cost, of agents, tools and tasks some budgets name and others
 * do not; budgets of every scope shape, both periods and every kind of cost. Two oracles: the
 * former statement, kept here verbatim, and each budget's spend summed in plain JavaScript.
 * The panel reads the current UTC period by the real clock, and so do the oracles.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '@clickhouse/client';
import type { ClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { BUDGET_SPEND_VS_LIMIT } from '../../../queries/dashboard-budgets.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { freshDatabase } from '../../helpers/clickhouse.ts';
import { chTime, insertCalls, rawCall, rng, type RawCall } from '../../helpers/raw-calls.ts';

/** The statement the panel ran before it grouped by the calls' own ids and skipped costless calls. */
const FORMER = `WITH
  set AS (
    SELECT JSONExtractString(b, 'budget_id') AS budget_id, JSONExtractString(b, 'mode') AS mode, JSONExtractString(b, 'period') AS period,
      JSONExtractFloat(b, 'limit_usd') AS limit_usd, JSONExtractString(b, 'scope', 'agent_id') AS s_agent,
      JSONExtractString(b, 'scope', 'tool_id') AS s_tool, JSONExtractString(b, 'scope', 'task_id') AS s_task,
      if(JSONExtractString(b, 'scope', 'costs') IN ('models', 'all'), 1, 0) AS s_models, if(JSONExtractString(b, 'scope', 'costs') = 'models', 0, 1) AS s_tools
    FROM (SELECT budgets FROM {db:Identifier}.budget_versions ORDER BY version DESC LIMIT 1)
    ARRAY JOIN JSONExtractArrayRaw(budgets) AS b
  ),
  -- What the budgets name. A call's agent, tool or task that no budget names is counted as '',
  -- which only a budget matching any value matches: the cells are as few as the scopes whatever
  -- is stored, and with no budget in force no call is read.
  named AS (SELECT groupUniqArray(s_agent) AS agents, groupUniqArray(s_tool) AS tools, groupUniqArray(s_task) AS tasks, count() AS budgets FROM set),
  cells AS (
    SELECT 'tool' AS kind, if(has((SELECT agents FROM named), toString(agent_id)), toString(agent_id), '') AS c_agent,
      if(has((SELECT tools FROM named), toString(tool_id)), toString(tool_id), '') AS c_tool, if(has((SELECT tasks FROM named), task_id), task_id, '') AS c_task,
      toDate(created_at, 'UTC') AS day, sum(ifNull(cost_usd, 0)) AS cost
    FROM {db:Identifier}.tool_invocations
    WHERE created_at >= toStartOfMonth(now64(3, 'UTC')) AND (SELECT budgets FROM named) > 0
    GROUP BY c_agent, c_tool, c_task, day
    -- model turns have no tool: a budget scoped to a tool never counts them
    UNION ALL SELECT 'model', if(has((SELECT agents FROM named), toString(agent_id)), toString(agent_id), '') AS c_agent, '',
      if(has((SELECT tasks FROM named), task_id), task_id, '') AS c_task, toDate(created_at, 'UTC') AS day, sum(ifNull(cost_usd, 0))
    FROM {db:Identifier}.model_turns
    WHERE created_at >= toStartOfMonth(now64(3, 'UTC')) AND (SELECT budgets FROM named) > 0
    GROUP BY c_agent, c_task, day
    -- a row matching nothing, so that every budget has a row when no call is stored yet
    UNION ALL SELECT 'none', '', '', '', toDate('1970-01-01'), 0
  )
SELECT budget_id, mode, period, limit_usd,
  sumIf(cost, (kind = 'tool' AND s_tools = 1 OR kind = 'model' AND s_models = 1) AND (s_agent = '' OR s_agent = c_agent) AND (s_tool = '' OR s_tool = c_tool) AND (s_task = '' OR s_task = c_task)
    AND day >= if(period = 'day', toDate(now('UTC'), 'UTC'), toStartOfMonth(toDate(now('UTC'), 'UTC')))) AS spent_usd,
  if(limit_usd = 0, NULL, spent_usd / limit_usd) AS used
FROM set CROSS JOIN cells
GROUP BY budget_id, mode, period, limit_usd
ORDER BY used DESC, budget_id`;

const DAY = 86_400_000;
const AGENTS = ['A1', 'A2', 'A3', 'A4'];
const TOOLS = ['fetch_url', 'search_web', 'sql_query'];
const TASKS = ['t-1', 't-2', 't-3', 't-4', ''];

interface Budget {
  budget_id: string;
  scope: { agent_id?: string; tool_id?: string; task_id?: string; costs?: 'tools' | 'models' | 'all' };
  period: 'day' | 'month';
  limit_usd: number;
  mode: 'warn' | 'deny';
}

interface Turn {
  task_id: string;
  agent_id: string;
  t: number;
  cost_usd: number | null;
}

/** Budgets of every scope shape (named and unnamed values), both periods, every kind of cost. */
function budgets(): Budget[] {
  const out: Budget[] = [];
  const shapes: Array<Budget['scope']> = [
    {},
    { agent_id: 'A1' },
    { tool_id: 'fetch_url' },
    { task_id: 't-1' },
    { agent_id: 'A2', tool_id: 'search_web' },
    { agent_id: 'A1', task_id: 't-2' },
    { tool_id: 'sql_query', task_id: 't-3' },
    { agent_id: 'A3', tool_id: 'fetch_url', task_id: 't-1' },
    { agent_id: 'nobody' },
  ];
  shapes.forEach((scope, i) => {
    for (const period of ['day', 'month'] as const) {
      for (const costs of [undefined, 'models', 'all'] as const) {
        out.push({ budget_id: `b${i}-${period}-${costs ?? 'tools'}`, scope: { ...scope, ...(costs ? { costs } : {}) }, period, limit_usd: i === 0 && period === 'day' ? 0 : 2 + i, mode: i % 2 ? 'warn' : 'deny' });
      }
    }
  });
  return out;
}

/** A budget's spend in its current period, from the rows as written (JavaScript's clock). */
function spent(b: Budget, calls: readonly RawCall[], turns: readonly Turn[], now: number): number {
  const today = Math.floor(now / DAY) * DAY;
  const d = new Date(now);
  const start = b.period === 'day' ? today : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const s = b.scope;
  const inScope = (r: { agent_id?: string; task_id: string; t: number }, tool?: string) =>
    r.t >= start && (!s.agent_id || s.agent_id === r.agent_id) && (!s.task_id || s.task_id === r.task_id) && (!s.tool_id || s.tool_id === tool);
  const costs = s.costs ?? 'tools';
  let sum = 0;
  if (costs !== 'models') for (const c of calls) if (inScope(c, c.tool_id)) sum += c.cost_usd ?? 0;
  // A model turn has no tool: a budget scoped to a tool never counts it.
  if (costs !== 'tools' && !s.tool_id) for (const t of turns) if (inScope(t)) sum += t.cost_usd ?? 0;
  return sum;
}

async function insertTurns(ch: ClickHouseClient, db: string, turns: readonly Turn[]): Promise<void> {
  await ch.insert({
    table: `${db}.model_turns`,
    format: 'JSONEachRow',
    values: turns.map((t) => ({
      turn_id: randomUUID(), task_id: t.task_id, agent_id: t.agent_id, model: 'm', provider: null, input_tokens: null, output_tokens: null, cached_input_tokens: null,
      cost_usd: t.cost_usd, cost_source: t.cost_usd === null ? null : 'reported', duration_ms: 1, status: 'success', error: null, requested_tool_calls: '[]',
      trace_id: '', span_id: '', created_at: chTime(t.t), fingerprint: 'f'.repeat(32), source: 'test',
    })),
  });
}

type Row = { budget_id: string; mode: string; period: string; limit_usd: number; spent_usd: number; used: number | null };
// Costs are multiples of 1/1024: every sum is exact in any order, so rows compare exactly.
const ordered = (rows: Row[]) => rows.map((r) => ({ ...r, limit_usd: Number(r.limit_usd), spent_usd: Number(r.spent_usd), used: r.used === null ? null : Number(r.used) }));

describe('the spend-vs-limit panel', () => {
  let ch: ClickHouseClient;
  let db: string;
  let door: ClickHouseDoor;
  const calls: RawCall[] = [];
  const turns: Turn[] = [];
  const set = budgets();

  beforeAll(async () => {
    ({ ch, db, door } = await freshDatabase('budpanel'));
    const r = rng(46);
    const now = Date.now();
    const d = new Date(now);
    const monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    // Today (up to a minute ago), earlier this month, and the last hours of last month.
    const when = () => {
      const u = r();
      if (u < 0.5) return now - 1000 - Math.floor(r() * Math.min(60_000, now - Math.floor(now / DAY) * DAY));
      if (u < 0.8) return monthStart + Math.floor(r() * Math.max(1, now - monthStart - 1000));
      return monthStart - 1 - Math.floor(r() * 6 * 3_600_000);
    };
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)] as T;
    const cost = () => (r() < 0.4 ? null : r() < 0.3 ? 0 : Math.floor(r() * 4096) / 1024);
    for (let i = 0; i < 1500; i++) calls.push(rawCall({ task_id: pick(TASKS), tool_id: pick(TOOLS), agent_id: pick(AGENTS), t: when(), cost_usd: cost() }));
    for (let i = 0; i < 400; i++) turns.push({ task_id: pick(TASKS), agent_id: pick(AGENTS), t: when(), cost_usd: cost() });
    await insertCalls(ch, db, calls);
    await insertTurns(ch, db, turns);
    await ch.insert({ table: `${db}.budget_versions`, values: [{ version: 1, budgets: JSON.stringify(set), key_id: 'test' }], format: 'JSONEachRow' });
  });

  it('answers as the former statement and as the rows summed in JavaScript', async () => {
    const panel = ordered(await door.read<Row>(BUDGET_SPEND_VS_LIMIT, { db }, DEFAULT_QUERY_CONTEXT));
    const former = ordered(await door.read<Row>({ name: 'former', sql: FORMER }, { db }, DEFAULT_QUERY_CONTEXT));
    expect(panel).toEqual(former);
    expect(panel).toHaveLength(set.length);
    const now = Date.now();
    for (const b of set) {
      const row = panel.find((p) => p.budget_id === b.budget_id);
      const want = spent(b, calls, turns, now);
      expect(row?.spent_usd, b.budget_id).toBe(want);
      expect(row?.used, b.budget_id).toBe(b.limit_usd === 0 ? null : want / b.limit_usd);
    }
    // The fixture holds what the statement must tell apart: some spend in every shape, none for nobody.
    expect(panel.filter((p) => p.spent_usd > 0).length).toBeGreaterThan(set.length / 2);
    expect(panel.filter((p) => p.budget_id.startsWith('b8-')).every((p) => p.spent_usd === 0)).toBe(true);
  });
});
