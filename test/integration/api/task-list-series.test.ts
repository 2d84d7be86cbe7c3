/**
 * The two read routes the web app added — GET /v1/tasks (recent tasks) and GET
 * /v1/tools/series (sparklines) — over the generated workload, against answers computed from
 * its packets; their auth, injection and OpenAPI checks run with every route in security.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskListSchema, toolSeriesSchema } from '../../../schemas/answers.ts';
import { approx, iso, readHarness, type Harness } from '../../helpers/read-harness.ts';
import type { GenInvocation } from '../../helpers/read-workload.ts';

let h: Harness;
beforeAll(async () => {
  h = await readHarness({ seed: 23 });
});
afterAll(async () => h?.app.close());

const inWindow = (c: GenInvocation, from: number, to: number) => Date.parse(c.created_at) >= from && Date.parse(c.created_at) < to;

describe('GET /v1/tasks and /v1/tools/series', () => {
  it('lists the tasks of a window with calls, failures, cost and agents, most recently active first', async () => {
    const from = h.baseMs + 2 * 3_600_000;
    const to = h.baseMs + 14 * 3_600_000;
    const calls = h.workload.invocations.filter((c) => c.task_id && inWindow(c, from, to));
    const byTask = new Map<string, GenInvocation[]>();
    for (const c of calls) byTask.set(c.task_id as string, [...(byTask.get(c.task_id as string) ?? []), c]);
    const expected = [...byTask].map(([task_id, cs]) => ({
      task_id,
      // No agent run names these tasks (task-list-turns.test.ts checks names).
      name: null,
      calls: cs.length,
      failures: cs.filter((c) => c.status !== 'success').length,
      total_cost_usd: cs.reduce((s, c) => s + (c.cost_usd ?? 0), 0),
      // This workload sends no model turns (the window-aggregates test does).
      model_turns: 0,
      model_input_tokens: 0,
      model_output_tokens: 0,
      model_cost_usd: 0,
      agents: [...new Set(cs.map((c) => c.agent_id))].sort(),
      first_call: iso(Math.min(...cs.map((c) => Date.parse(c.created_at)))),
      last_call: iso(Math.max(...cs.map((c) => Date.parse(c.created_at)))),
    }));
    expected.sort((a, b) => b.last_call.localeCompare(a.last_call) || a.task_id.localeCompare(b.task_id));
    expect(expected.length).toBeGreaterThan(2);
    const r = await h.get(`/v1/tasks?from=${iso(from)}&to=${iso(to)}&limit=1000`);
    expect(r.status).toBe(200);
    expect(approx(taskListSchema.parse(r.body).tasks)).toEqual(approx(expected));
    const two = await h.get(`/v1/tasks?from=${iso(from)}&to=${iso(to)}&limit=2`);
    expect(two.body.tasks).toEqual(r.body.tasks.slice(0, 2));
  });

  it('buckets calls and cost per tool', async () => {
    const bucketS = 3600;
    const from = h.baseMs;
    const to = h.baseMs + 24 * 3_600_000;
    const expected = new Map<string, { calls: number; cost_usd: number }>();
    for (const c of h.workload.invocations.filter((x) => inWindow(x, from, to))) {
      const t = Math.floor(Date.parse(c.created_at) / (bucketS * 1000)) * bucketS * 1000;
      const k = `${c.tool_id}|${iso(t)}`;
      const e = expected.get(k) ?? { calls: 0, cost_usd: 0 };
      expected.set(k, { calls: e.calls + 1, cost_usd: e.cost_usd + (c.cost_usd ?? 0) });
    }
    const r = await h.get(`/v1/tools/series?from=${iso(from)}&to=${iso(to)}&bucket_s=${bucketS}`);
    expect(r.status).toBe(200);
    const body = toolSeriesSchema.parse(r.body);
    expect(body.bucket_s).toBe(bucketS);
    expect(body.series.map((s) => s.tool_id)).toEqual([...new Set(body.series.map((s) => s.tool_id))].sort());
    const got = new Map(body.series.flatMap((s) => s.points.map((p) => [`${s.tool_id}|${p.time}`, { calls: p.calls, cost_usd: p.cost_usd }] as const)));
    expect(approx(Object.fromEntries(got))).toEqual(approx(Object.fromEntries(expected)));
  });

  it('refuses a bucket under a minute and unknown parameters', async () => {
    expect((await h.get('/v1/tools/series?bucket_s=10')).status).toBe(400);
    expect((await h.get('/v1/tasks?tool_id=x')).status).toBe(400);
  });
});
