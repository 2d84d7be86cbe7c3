/**
 * The task list's model figures: each listed task with the turns it holds in the window (count,
 * tokens in and out, cost with a missing cost as 0), whatever turns lie outside the window or
 * belong to tasks the list does not hold; and each task's name, its outermost agent run's. Oracle:
 * the task list computed in plain JavaScript over the generated calls, turns and runs
 * (test/helpers/window-oracle.ts).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createReadQueries } from '../../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { freshDatabase } from '../../helpers/clickhouse.ts';
import { chTime, insertCalls, rawCall, rng } from '../../helpers/raw-calls.ts';
import { taskListOracle, windowsOver, type RawRun, type RawTurn } from '../../helpers/window-oracle.ts';

const HOUR = 3_600_000;
const start = Math.floor(Date.now() / HOUR) * HOUR - 24 * HOUR;

describe('GET /v1/tasks: model turns and names of the listed tasks', () => {
  it('equal the oracle for windows that start and end inside an hour, with turns of unlisted tasks and outside the window', async () => {
    const { ch, db, door } = await freshDatabase('tlturns');
    const r = rng(7);
    const task = () => `task-${Math.floor(r() * 30)}`;
    const calls = Array.from({ length: 600 }, () => rawCall({ task_id: task(), tool_id: 'search_web', t: start + Math.floor(r() * 24 * HOUR), cost_usd: Math.floor(r() * 100) / 64 }));
    // Tasks 30–39 hold turns only: never listed.
    const turns: RawTurn[] = Array.from({ length: 900 }, () => ({
      task_id: r() < 0.85 ? task() : `task-${30 + Math.floor(r() * 10)}`,
      t: start + Math.floor(r() * 24 * HOUR),
      input_tokens: r() < 0.1 ? null : Math.floor(r() * 5000),
      output_tokens: r() < 0.1 ? null : Math.floor(r() * 500),
      cost_usd: r() < 0.2 ? null : Math.floor(r() * 1000) / 4096,
    }));
    await insertCalls(ch, db, calls);
    await ch.insert({
      table: `${db}.model_turns`,
      format: 'JSONEachRow',
      values: turns.map((t) => ({
        turn_id: randomUUID(), task_id: t.task_id, agent_id: 'A', model: 'm', provider: null, input_tokens: t.input_tokens, output_tokens: t.output_tokens,
        cached_input_tokens: null, cost_usd: t.cost_usd, cost_source: t.cost_usd === null ? null : 'reported', duration_ms: 1, status: 'success', error: null,
        requested_tool_calls: '[]', trace_id: '', span_id: '', created_at: chTime(t.t), fingerprint: 'f'.repeat(32), source: 'test',
      })),
    });
    // Runs of 20 of the 30 tasks, some starting together (ties: the longest, then the lowest run_id,
    // names the task), some outside every window: a name is the task's, whatever the window.
    const runs: RawRun[] = Array.from({ length: 120 }, (_, i) => {
      const s0 = start + (i % 3 === 0 ? 0 : Math.floor(r() * 48 * HOUR) - 12 * HOUR);
      return { run_id: randomUUID(), task_id: `task-${Math.floor(r() * 20)}`, name: `run ${i}`, start: s0, end: s0 + (i % 5 === 0 ? 1000 : Math.floor(r() * HOUR)) };
    });
    await ch.insert({
      table: `${db}.agent_runs`,
      format: 'JSONEachRow',
      values: runs.map((x) => ({
        run_id: x.run_id, task_id: x.task_id, agent_id: 'A', name: x.name, duration_ms: x.end - x.start, status: 'success', error: null,
        trace_id: '', span_id: '', parent_span_id: '', created_at: chTime(x.end), fingerprint: 'f'.repeat(32), source: 'test',
      })),
    });
    const q = createReadQueries(door, db, DEFAULT_QUERY_CONTEXT);
    let withTurns = 0;
    let named = 0;
    for (const [from, to] of windowsOver(start, start + 24 * HOUR, calls.map((c) => c.t), 5, 12)) {
      for (const limit of [1000, 4]) {
        const want = taskListOracle(calls, from, to, limit, turns, runs).tasks;
        withTurns += want.filter((t) => t.model_turns > 0).length;
        named += want.filter((t) => t.name !== null).length;
        const got = (await q.tasks({ window: { fromMs: from, toMs: to }, limit })).tasks;
        expect(got.map((t) => t.task_id)).toEqual(want.map((t) => t.task_id));
        got.forEach((t, i) => {
          const w = want[i]!;
          expect([t.model_turns, t.model_input_tokens, t.model_output_tokens], t.task_id).toEqual([w.model_turns, w.model_input_tokens, w.model_output_tokens]);
          expect(t.model_cost_usd, t.task_id).toBeCloseTo(w.model_cost_usd, 9);
          expect(t.name, t.task_id).toBe(w.name);
        });
      }
    }
    expect(withTurns).toBeGreaterThan(20);
    expect(named).toBeGreaterThan(20);
  }, 120_000);
});
