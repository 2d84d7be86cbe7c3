/**
 * The task page's model: bars from created_at over duration_ms in call order, arrows with data
 * flow, outputs and violations per call, totals, and which arrows are drawn.
 */
import { describe, expect, it } from 'vitest';
import type { AgentRunView, Dependency, Invocation, TaskView } from '../../../schemas/answers.ts';
import { barLabel, drawnArrows, runTree, taskModel, type Violation } from '../../../web/app/task-model.ts';

const t0 = Date.UTC(2026, 0, 1, 12);
const call = (i: number, o: Partial<Invocation> = {}): Invocation => ({
  call_id: `c${i}`,
  task_id: 't',
  tool_id: ['search_web', 'fetch_url', 'python_execute'][i % 3] as string,
  agent_id: 'QA_Agent',
  orchestrator: 'kernel',
  instance_id: 'k1',
  args: { i },
  args_hash: 'h',
  status: 'success',
  success: true,
  duration_ms: 1000,
  result_summary: {},
  error: null,
  error_category: null,
  cost_usd: 0.01,
  expensive: false,
  tokens_used: null,
  created_at: new Date(t0 + i * 2000).toISOString(),
  ...o,
});
const dep = (a: number, b: number, o: Partial<Dependency> = {}): Dependency => ({
  task_id: 't',
  preceding_call_id: `c${a}`,
  succeeding_call_id: `c${b}`,
  preceding_tool_id: 'x',
  succeeding_tool_id: 'y',
  time_delta_ms: (b - a) * 2000,
  data_flow: null,
  origin: 'analyzer',
  ...o,
});
const view = (invocations: Invocation[], dependencies: Dependency[] = []): TaskView => ({
  task_id: 't',
  name: null,
  agent_id: null,
  agent_runs: [],
  invocations,
  dependencies,
  outputs: [{ output_id: 'o1', call_id: 'c1', tool_id: 'fetch_url', content_type: 'html', content_hash: 'ch', size_bytes: 10, sample: '<p>', created_at: invocations[1]?.created_at ?? '' }],
  model_turns: [],
  workflow_dag: { nodes: [], edges: [] },
  next_cursor: null,
});

describe('taskModel', () => {
  it('puts one bar per call at its offset from the first call, over its duration, with its text', () => {
    const m = taskModel(view([call(0), call(1, { status: 'timeout', duration_ms: 30_000, cost_usd: null }), call(2, { cost_usd: 1.5 })]), []);
    expect(m.bars.map((b) => [b.start, b.end])).toEqual([
      [0, 1000],
      [2000, 32_000],
      [4000, 5000],
    ]);
    expect(m.bars[1]?.label).toBe('#2 fetch_url · timeout · 30.0 s · – · agent QA_Agent');
    expect(m.bars[1]?.outputs.map((o) => o.output_id)).toEqual(['o1']);
    expect(m.totals).toEqual({ calls: 3, spanMs: 32_000, busyMs: 32_000, costUsd: 1.51, failed: 1, violations: 0, turns: 0, modelTokensIn: 0, modelTokensOut: 0, modelCostUsd: 0 });
  });

  it('links dependencies by index, marks data flow, and keeps violations that touch the task', () => {
    const v = (ids: string[]): Violation => ({ invariant: 'I4', packet_type: 'tool_call', ids, detail: 'no error', detected_at: '2026-01-01T13:00:00.000Z', task_id: 't' });
    const m = taskModel(view([call(0), call(1), call(2)], [dep(0, 1, { data_flow: 'url' }), dep(1, 2), dep(0, 9)]), [v(['c2']), v(['other'])]);
    expect(m.arrows.map((a) => [a.from, a.to, a.dataFlow])).toEqual([
      [0, 1, true],
      [1, 2, false],
    ]);
    expect(m.violations).toHaveLength(1);
    expect(m.bars[2]?.violations).toHaveLength(1);
    expect(m.bars[2]?.label.endsWith('· 1 violation')).toBe(true);
  });

  it('draws data-flow, emitted and nearest-predecessor arrows only', () => {
    const m = taskModel(view([call(0), call(1), call(2), call(3)], [dep(0, 1), dep(0, 2), dep(1, 2), dep(0, 3, { data_flow: 'x' }), dep(1, 3, { origin: 'emitted' }), dep(2, 3)]), []);
    expect(drawnArrows(m.arrows).map((a) => `${a.from}>${a.to}`)).toEqual(['0>1', '1>2', '0>3', '1>3', '2>3']);
  });

  it('places model turns from request to answer, links the calls they asked for, and totals their tokens and cost', () => {
    const turn = (id: string, endMs: number, asked: Array<[string | null, string, string | null]>, o: Record<string, unknown> = {}) => ({
      turn_id: id, agent_id: 'QA_Agent', model: 'gpt-4o', provider: 'openai', input_tokens: 1000, output_tokens: 20, cached_input_tokens: null, cost_usd: 0.003, cost_source: 'price_table' as const,
      duration_ms: 400, status: 'success' as const, error: null, requested_tool_calls: asked.map(([qid, tool, callId]) => ({ id: qid, tool_id: tool, call_id: callId })), trace_id: null, span_id: null,
      created_at: new Date(t0 + endMs).toISOString(), messages: null, ...o,
    });
    const m = taskModel({ ...view([call(0), call(1), call(2)]), model_turns: [turn('u1', -100, [['a', 'search_web', 'c0'], [null, 'fetch_url', 'c1'], [null, 'send_email', null]]), turn('u2', 5000, [], { input_tokens: null, cost_usd: null })] }, []);
    expect(m.turns.map((t) => [t.start, t.end, t.asked.map((a) => a.bar)])).toEqual([[-500, -100, [0, 1, undefined]], [4600, 5000, []]]);
    expect(m.bars.map((b) => b.askedBy)).toEqual([0, 0, undefined]);
    expect(m.turns[0]?.label).toBe('turn 1 gpt-4o · success · 1000 in / 20 out tokens · $0.0030 · 400 ms · asked for search_web, fetch_url, send_email');
    expect(m.turns[1]?.label).toContain('? in / 20 out tokens');
    expect(m.totals).toMatchObject({ turns: 2, modelTokensIn: 1000, modelTokensOut: 40, modelCostUsd: 0.003 });
  });

  it('has no bars for a task without calls', () => {
    expect(taskModel(view([]), []).totals.calls).toBe(0);
    expect(barLabel(call(0), 0, 2)).toBe('#1 search_web · success · 1.00 s · $0.010 · agent QA_Agent · 2 violations');
  });
});

describe('runTree', () => {
  const r = (id: string, span: string | null, parent: string | null): AgentRunView => ({
    run_id: id, agent_id: `agent-${id}`, name: id, started_at: '2026-11-29T00:00:00.000Z', duration_ms: 1000, status: 'success', error: null,
    trace_id: null, span_id: span, parent_span_id: parent, created_at: '2026-11-29T00:00:01.000Z',
  });

  it('puts each run after the run it was started under, siblings in the view\'s order', () => {
    // As the view orders them (first to start first): a, b (under a), c (under b), d (under a), e (a root of its own).
    const runs = [r('a', 's1', null), r('e', 's5', 'xx'), r('d', 's4', 's1'), r('b', 's2', 's1'), r('c', 's3', 's2')];
    expect(runTree(runs).map((x) => [x.run.run_id, x.depth])).toEqual([['a', 0], ['d', 1], ['b', 1], ['c', 2], ['e', 0]]);
    expect(runTree(runs)[0]?.label).toBe('a · agent agent-a · success · 1.00 s');
  });

  it('lists every run once, whatever the parents say (a cycle, a run its own parent, no spans)', () => {
    const runs = [r('a', 's1', 's2'), r('b', 's2', 's1'), r('c', 's3', 's3'), r('d', null, null), r('e', null, 's1')];
    const got = runTree(runs).map((x) => x.run.run_id);
    expect(got.sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
});
