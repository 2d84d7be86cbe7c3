/**
 * The "Dependency pairs by tool" panel (queries/dashboard-workflows.ts) answers as the statement it
 * replaced, on a fixed database: calls of many tasks across hour edges, dependency rows emitted,
 * linked by the analyzer or both (the emitted one supersedes), pairs whose preceding call lies
 * outside the window. Two oracles: the former statement, kept here verbatim, and the answer
 * computed in plain JavaScript from the rows inserted.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { DEPENDENCY_PAIRS_BY_TOOL } from '../../../queries/dashboard-workflows.ts';
import { freshDatabase } from '../../helpers/clickhouse.ts';
import { chTime, insertCalls, rawCall, rng, type RawCall } from '../../helpers/raw-calls.ts';
import { cmp } from '../../helpers/read-oracle.ts';
import { exactInclusive } from '../../helpers/window-oracle.ts';

/** The statement the panel ran before it read tool_workflows in its own order. */
const FORMER = `SELECT
  toString(preceding_tool_id) AS from_tool,
  toString(succeeding_tool_id) AS to_tool,
  count() AS pairs,
  avg(time_delta_ms) AS avg_delta_ms,
  quantileExactInclusive(0.95)(time_delta_ms) AS p95_delta_ms,
  countIf(data_flow IS NOT NULL) AS with_data_flow,
  countIf(origin = 'analyzer') AS linked_by_analyzer
FROM (
  SELECT preceding_tool_id, succeeding_tool_id, time_delta_ms, data_flow, origin
  FROM {db:Identifier}.tool_workflows
  WHERE task_id IN (SELECT DISTINCT task_id FROM {db:Identifier}.tool_invocations WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')} AND task_id != '')
    AND preceding_call_id IN (SELECT call_id FROM {db:Identifier}.tool_invocations WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')})
  ORDER BY preceding_call_id, succeeding_call_id, origin
  LIMIT 1 BY preceding_call_id, succeeding_call_id)
GROUP BY from_tool, to_tool
ORDER BY pairs DESC, from_tool, to_tool
LIMIT {limit:UInt32}`;

const HOUR = 3_600_000;
const START = Date.UTC(2026, 10, 20, 9, 0, 0);
const TOOLS = ['search', 'fetch', 'parse', 'summarize', 'chart'];

interface Dep {
  task_id: string;
  preceding: RawCall;
  succeeding: RawCall;
  delta: number;
  flow: string | null;
  origin: 'emitted' | 'analyzer';
}

type Answer = { from_tool: string; to_tool: string; pairs: number; avg_delta_ms: number; p95_delta_ms: number; with_data_flow: number; linked_by_analyzer: number };

/** Calls of 40 tasks over four hours (some on an hour's edge), and dependencies between consecutive calls of a task. */
function fixture(): { calls: RawCall[]; deps: Dep[] } {
  const r = rng(46);
  const calls: RawCall[] = [];
  const deps: Dep[] = [];
  for (let k = 0; k < 40; k++) {
    const task = `task-${k}`;
    let t = START + Math.floor(r() * 3 * HOUR);
    const mine: RawCall[] = [];
    for (let i = 0; i < 10 + Math.floor(r() * 20); i++) {
      t += r() < 0.1 ? HOUR - (t % HOUR) : 1 + Math.floor(r() * 90_000);
      mine.push(rawCall({ task_id: task, tool_id: TOOLS[Math.floor(r() * TOOLS.length)] as string, t }));
    }
    calls.push(...mine);
    for (let i = 1; i < mine.length; i++) {
      const [preceding, succeeding] = [mine[i - 1] as RawCall, mine[i] as RawCall];
      const u = r();
      const dep = (origin: Dep['origin'], flow: string | null): Dep => ({ task_id: task, preceding, succeeding, delta: succeeding.t - preceding.t, flow, origin });
      // Emitted, linked by the analyzer, or both (the emitted row supersedes; its flow differs).
      if (u < 0.4) deps.push(dep('emitted', r() < 0.5 ? 'args.url' : null));
      else if (u < 0.8) deps.push(dep('analyzer', null));
      else if (u < 0.95) deps.push(dep('analyzer', null), dep('emitted', 'result.text'));
    }
  }
  // Calls of no task: never in a pair, but in the window's calls.
  for (let i = 0; i < 30; i++) calls.push(rawCall({ tool_id: 'search', t: START + Math.floor(r() * 4 * HOUR) }));
  return { calls, deps };
}

/** The panel's answer from the rows themselves. */
function oracle(calls: readonly RawCall[], deps: readonly Dep[], from: number, to: number, limit: number): Answer[] {
  const inWindow = (c: RawCall) => c.t >= from && c.t < to;
  const tasks = new Set(calls.filter((c) => inWindow(c) && c.task_id !== '').map((c) => c.task_id));
  const kept = new Map<string, Dep>();
  for (const d of deps) {
    if (!tasks.has(d.task_id) || !inWindow(d.preceding)) continue;
    const key = `${d.preceding.call_id}/${d.succeeding.call_id}`;
    const held = kept.get(key);
    if (!held || (held.origin === 'analyzer' && d.origin === 'emitted')) kept.set(key, d);
  }
  const groups = new Map<string, Dep[]>();
  for (const d of kept.values()) {
    const key = `${d.preceding.tool_id}>${d.succeeding.tool_id}`;
    const group = groups.get(key);
    if (group) group.push(d);
    else groups.set(key, [d]);
  }
  return [...groups.entries()]
    .map(([key, ds]) => {
      const [from_tool, to_tool] = key.split('>') as [string, string];
      const deltas = ds.map((d) => d.delta).sort((a, b) => a - b);
      return {
        from_tool,
        to_tool,
        pairs: ds.length,
        avg_delta_ms: deltas.reduce((a, b) => a + b, 0) / ds.length,
        p95_delta_ms: exactInclusive(deltas, 0.95),
        with_data_flow: ds.filter((d) => d.flow !== null).length,
        linked_by_analyzer: ds.filter((d) => d.origin === 'analyzer').length,
      };
    })
    .sort((a, b) => b.pairs - a.pairs || cmp(a.from_tool, b.from_tool) || cmp(a.to_tool, b.to_tool))
    .slice(0, limit);
}

let door: ClickHouseDoor;
let data: { calls: RawCall[]; deps: Dep[] };

beforeAll(async () => {
  const fresh = await freshDatabase('wfp');
  door = fresh.door;
  data = fixture();
  await insertCalls(fresh.ch, fresh.db, data.calls);
  // Two inserts: the analyzer's rows and the emitted ones land in different parts, as they do.
  for (const origin of ['analyzer', 'emitted'] as const) {
    await fresh.ch.insert({
      table: `${fresh.db}.tool_workflows`,
      format: 'JSONEachRow',
      values: data.deps
        .filter((d) => d.origin === origin)
        .map((d) => ({
          task_id: d.task_id,
          preceding_call_id: d.preceding.call_id,
          succeeding_call_id: d.succeeding.call_id,
          preceding_tool_id: d.preceding.tool_id,
          succeeding_tool_id: d.succeeding.tool_id,
          time_delta_ms: d.delta,
          data_flow: d.flow,
          origin,
          fingerprint: randomUUID().replaceAll('-', ''),
          source: 'test',
        })),
    });
  }
}, 120_000);

describe('Dependency pairs by tool', () => {
  const windows: Array<[string, number, number]> = [
    ['all of it', START - HOUR, START + 6 * HOUR],
    ['starting and ending inside an hour', START + HOUR + 17 * 60_000 + 123, START + 2 * HOUR + 43 * 60_000 + 7],
    ['whole hours', START + HOUR, START + 3 * HOUR],
    ['nothing in it', START - 3 * HOUR, START - 2 * HOUR],
  ];
  it.each(windows)('answers as the former statement and the rows do, over %s', async (_name, from, to) => {
    for (const limit of [100, 3]) {
      const params = { from: chTime(from), to: chTime(to), limit };
      const got = await door.select<Answer>(DEPENDENCY_PAIRS_BY_TOOL.sql, params);
      expect(got).toEqual(await door.select<Answer>(FORMER, params));
      const want = oracle(data.calls, data.deps, from, to, limit);
      expect(got.map(({ avg_delta_ms: _a, ...g }) => g)).toEqual(want.map(({ avg_delta_ms: _a, ...w }) => w));
      got.forEach((g, i) => expect(g.avg_delta_ms).toBeCloseTo((want[i] as Answer).avg_delta_ms, 6));
    }
  });

  it('the fixture holds what the windows test: superseded rows, and pairs cut by the window', () => {
    const both = data.deps.filter((d) => d.origin === 'emitted' && data.deps.some((e) => e.origin === 'analyzer' && e.preceding === d.preceding));
    expect(both.length).toBeGreaterThan(10);
    const [, from, to] = windows[1] as [string, number, number];
    const cut = data.deps.filter((d) => d.preceding.t < from && d.succeeding.t >= from);
    expect(cut.length).toBeGreaterThan(0);
    expect(data.calls.some((c) => c.t % HOUR === 0 && c.t >= from && c.t < to)).toBe(true);
  });
});
