/**
 * Every read endpoint of SPEC §5 over a generated workload ingested through the real pipeline,
 * against answers computed from the generated packets (oracle.ts). Lists are read page by page
 * with small limits, so cursors and tiebreaks are exercised too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentToolsSchema,
  dedupSchema,
  expensiveSchema,
  failedSchema,
  identicalOutputsSchema,
  invocationListSchema,
  sequencesSchema,
  slowSchema,
  taskViewSchema,
  toolOutputsSchema,
  toolStatsSchema,
  toolsSummarySchema,
  violationsSchema,
} from '../../../schemas/answers.ts';
import { approx, iso, READ_KEY, readHarness, type Harness } from '../../helpers/read-harness.ts';
import { byPair, oracle, uuidKey, type Win } from '../../helpers/read-oracle.ts';
import { taskIds } from '../../helpers/read-workload.ts';

let h: Harness;
let o: ReturnType<typeof oracle>;
const ALL: Win = { from: 0, to: Date.UTC(2200, 0, 1) };

beforeAll(async () => {
  h = await readHarness();
  o = oracle(h.workload);
});
afterAll(async () => h?.app.close());

const TOOLS = ['search_web', 'fetch_url', 'python_execute', 'create_chart', 'llm_summarize', 'image_generate'];

describe('read API over a generated workload', () => {
  it('ByToolId stats: counts, success rate, avg and p95 duration, cost, error messages', async () => {
    const half: Win = { from: h.baseMs + 4 * 3_600_000, to: h.baseMs + 12 * 3_600_000 };
    for (const tool of [...TOOLS, 'no_such_tool']) {
      const r = await h.get(`/v1/tools/${tool}/stats`);
      expect(r.status).toBe(200);
      expect(approx(toolStatsSchema.parse(r.body))).toEqual(approx(o.toolStats(tool, ALL)));
      const w = await h.get(`/v1/tools/${tool}/stats?from=${iso(half.from)}&to=${iso(half.to)}`);
      expect(approx(w.body)).toEqual(approx(o.toolStats(tool, half)));
    }
  });

  it('every tool at a glance (GET /v1/tools): the stats of each tool, most invoked first', async () => {
    const r = await h.get('/v1/tools');
    const want = [...new Set(h.workload.invocations.map((i) => i.tool_id))]
      .map((tool) => {
        const { error_distribution: _e, ...stats } = o.toolStats(tool, ALL);
        return { ...stats, server: '' }; // no manifest in this workload: no tool came from MCP
      })
      .sort((a, b) => b.invocations - a.invocations || a.tool_id.localeCompare(b.tool_id));
    expect(approx(toolsSummarySchema.parse(r.body).tools)).toEqual(approx(want));
  });

  it('ByToolId invocations: newest first, every page, tiebreak on call_id', async () => {
    for (const tool of TOOLS) {
      const { items, pages } = await h.all(`/v1/tools/${tool}/invocations?limit=4`, 'invocations');
      pages.forEach((p) => invocationListSchema.parse(p));
      expect(items).toEqual(o.toolInvocations(tool, ALL));
    }
  });

  it('ByTool outputs: one per content hash with sample, size, count, first and last seen', async () => {
    for (const tool of TOOLS) {
      const { items, pages } = await h.all(`/v1/tools/${tool}/outputs?limit=3`, 'outputs');
      pages.forEach((p) => toolOutputsSchema.parse(p));
      expect(items).toEqual(o.toolOutputs(tool, ALL));
    }
  });

  it('ByAgent: tool frequency over the window, invocations newest first, tool sequence in call order', async () => {
    for (const agent of ['L', 'QA_Agent', 'Researcher', 'nobody']) {
      const { items, pages } = await h.all(`/v1/agents/${agent}/tools?limit=5`, 'invocations');
      const want = o.agent(agent, ALL);
      expect(items).toEqual(want.invocations);
      for (const p of pages) {
        agentToolsSchema.parse(p);
        expect(p.tool_frequency).toEqual(want.tool_frequency);
        expect(p.tool_sequence).toEqual(p.invocations.map((i: { tool_id: string }) => i.tool_id).reverse());
      }
    }
  });

  it('ByTask: calls in call order, dependencies, outputs and the workflow DAG', async () => {
    for (const task of [...taskIds(16), 'no-such-task']) {
      const r = await h.get(`/v1/tasks/${encodeURIComponent(task)}`);
      expect(r.status).toBe(200);
      const v = taskViewSchema.parse(r.body);
      const want = o.task(task);
      expect(v.task_id).toBe(task);
      expect(v.invocations).toEqual(want.invocations);
      expect([...v.dependencies].sort(byPair)).toEqual([...want.dependencies].sort(byPair));
      expect([...v.outputs].sort((a, b) => a.output_id.localeCompare(b.output_id))).toEqual([...want.outputs].sort((a, b) => a.output_id.localeCompare(b.output_id)));
      expect(v.workflow_dag.nodes.map((n) => n.id)).toEqual(want.invocations.map((i) => i.call_id));
      const edgeKey = (e: { from: string; to: string }) => `${e.from}>${e.to}`;
      expect(v.workflow_dag.edges.map(edgeKey).sort()).toEqual(want.edges.map(edgeKey).sort());
      expect(v.next_cursor).toBeNull();
    }
  });

  it('ByTask pages: limit 2 walks the calls in order; each page has its own dependencies and outputs', async () => {
    const task = taskIds(16)[3] as string;
    const { items, pages } = await h.all(`/v1/tasks/${encodeURIComponent(task)}?limit=2`, 'invocations');
    expect(items).toEqual(o.task(task).invocations);
    for (const p of pages) {
      const ids = new Set(p.invocations.map((i: { call_id: string }) => i.call_id));
      for (const out of p.outputs) expect(ids.has(out.call_id)).toBe(true);
      for (const d of p.dependencies) expect(ids.has(d.preceding_call_id) || ids.has(d.succeeding_call_id)).toBe(true);
    }
  });

  it('Expensive: by cost descending, count and total over the window, default threshold 1.0', async () => {
    for (const [q, threshold] of [['', 1], ['&threshold_usd=0.5', 0.5], ['&threshold_usd=0', 0]] as const) {
      const { items, pages } = await h.all(`/v1/calls/expensive?limit=3${q}`, 'invocations');
      const want = o.expensive(threshold, ALL);
      expect(items).toEqual(want.invocations);
      for (const p of pages) {
        expensiveSchema.parse(p);
        expect(p.count).toBe(want.count);
        expect(approx(p.total_cost_usd)).toBe(approx(want.total_cost_usd));
      }
    }
    expect(o.expensive(1, ALL).count).toBeGreaterThan(0);
  });

  it('Slow: by duration descending with count', async () => {
    for (const [q, threshold] of [['', 30_000], ['&threshold_ms=10000', 10_000], ['&threshold_ms=29999', 29_999]] as const) {
      const { items, pages } = await h.all(`/v1/calls/slow?limit=4${q}`, 'invocations');
      const want = o.slow(threshold, ALL);
      expect(items).toEqual(want.invocations);
      pages.forEach((p) => expect(slowSchema.parse(p).count).toBe(want.count));
    }
  });

  it('Failed: failed calls newest first, distribution by status, frequent messages', async () => {
    const { items, pages } = await h.all('/v1/calls/failed?limit=3', 'errors');
    const want = o.failed(ALL);
    expect(items).toEqual(want.errors);
    for (const p of pages) {
      failedSchema.parse(p);
      expect(p.error_distribution).toEqual(want.error_distribution);
      expect(p.frequent_errors).toEqual(want.frequent_errors);
      expect(p.count).toBe(want.count);
    }
    expect(want.errors.some((e) => e.error === null)).toBe(true); // a failure without a message (I4) is listed
    for (const p of pages) expect(p.category_distribution).toEqual(want.category_distribution);
    // Every category, and the one with JSON escapes and non-ASCII, filters exactly.
    const categories = Object.keys(want.category_distribution).filter((c) => c !== '(none)');
    expect(categories.length).toBeGreaterThanOrEqual(4);
    for (const c of categories) {
      const one = await h.all(`/v1/calls/failed?limit=50&error_category=${encodeURIComponent(c)}`, 'errors');
      const wantOne = o.failed(ALL, c);
      expect(one.items).toEqual(wantOne.errors);
      expect(one.pages[0]?.category_distribution).toEqual({ [c]: wantOne.count });
      expect(one.pages[0]?.frequent_errors).toEqual(wantOne.frequent_errors);
    }
  });

  it('Dedup candidates: groups, savings beyond the first call, totals', async () => {
    for (const min of [2, 3]) {
      const { items, pages } = await h.all(`/v1/dedup/candidates?limit=2&min_count=${min}`, 'groups');
      const want = o.dedup(min, ALL);
      expect(want.groups.length).toBeGreaterThan(0);
      expect(approx(items)).toEqual(approx(want.groups));
      for (const p of pages) expect(approx(dedupSchema.parse(p).totals)).toEqual(approx(want.totals));
    }
  });

  it('Identical outputs: groups with their calls, optionally for one tool', async () => {
    const { items, pages } = await h.all('/v1/outputs/identical?limit=2', 'groups');
    pages.forEach((p) => identicalOutputsSchema.parse(p));
    expect(items).toEqual(o.identicalOutputs(2, ALL));
    expect(items.length).toBeGreaterThan(0);
    const one = await h.all('/v1/outputs/identical?tool_id=search_web&min_count=2', 'groups');
    expect(one.items).toEqual(o.identicalOutputs(2, ALL, 'search_web'));
  });

  it('Common sequences of length 2, 3 and 4', async () => {
    for (const [len, min] of [[2, 2], [3, 2], [4, 1]] as const) {
      const { items, pages } = await h.all(`/v1/workflows/sequences?length=${len}&min_count=${min}&limit=3`, 'sequences');
      pages.forEach((p) => expect(sequencesSchema.parse(p).length).toBe(len));
      expect(items).toEqual(o.sequences(len, min, ALL));
    }
  });

  it('Violations: newest first with counts per invariant, filter by invariant', async () => {
    const { items, pages } = await h.all('/v1/violations?limit=4', 'violations');
    const want = o.violations(ALL);
    expect(items).toEqual(want.violations);
    pages.forEach((p) => expect(violationsSchema.parse(p).counts).toEqual(want.counts));
    const i8 = await h.all('/v1/violations?invariant=I8', 'violations');
    expect(i8.items).toEqual(o.violations(ALL, 'I8').violations);
    // A task's and a call's violations (the task page reads them so), paged; every task that has one, and one that has none.
    const named = new Set(want.violations.flatMap((v) => v.ids));
    const tasks = [...new Set(h.workload.invocations.filter((i) => named.has(i.call_id)).map((i) => i.task_id))].slice(0, 12);
    expect(tasks.length).toBeGreaterThan(2);
    for (const task of [...tasks, 'no-such-task']) {
      const t = await h.all(`/v1/violations?limit=2&task_id=${encodeURIComponent(task ?? '')}`, 'violations');
      expect(t.items, task ?? '').toEqual(o.violations(ALL, undefined, { task: task ?? '' }).violations);
      t.pages.forEach((p) => expect(violationsSchema.parse(p).counts).toEqual(o.violations(ALL, undefined, { task: task ?? '' }).counts));
    }
    const call = want.violations[3]?.ids[0] ?? '';
    const byCall = await h.all(`/v1/violations?call_id=${encodeURIComponent(call)}`, 'violations');
    expect(byCall.items).toEqual(o.violations(ALL, undefined, { call }).violations);
    expect(byCall.items.length).toBeGreaterThan(0);
    // A tool's violations: those naming one of its calls; every tool named, and one with none.
    const tools = [...new Set(h.workload.invocations.filter((i) => named.has(i.call_id)).map((i) => i.tool_id))];
    expect(tools.length).toBeGreaterThan(1);
    for (const tool of [...tools, 'no-such-tool']) {
      const t = await h.all(`/v1/violations?limit=3&tool_id=${encodeURIComponent(tool)}`, 'violations');
      expect(t.items, tool).toEqual(o.violations(ALL, undefined, { tool }).violations);
    }
  });

  it('from/to cut every list to the window (half-open)', async () => {
    const sorted = h.workload.invocations.map((i) => Date.parse(i.created_at)).sort((a, b) => a - b);
    const w: Win = { from: sorted[20] as number, to: sorted[80] as number };
    const q = `from=${iso(w.from)}&to=${iso(w.to)}`;
    expect((await h.all(`/v1/tools/search_web/invocations?${q}`, 'invocations')).items).toEqual(o.toolInvocations('search_web', w));
    expect((await h.all(`/v1/calls/failed?${q}`, 'errors')).items).toEqual(o.failed(w).errors);
    expect(approx((await h.all(`/v1/dedup/candidates?${q}`, 'groups')).items)).toEqual(approx(o.dedup(2, w).groups));
    expect((await h.all(`/v1/workflows/sequences?${q}&min_count=1`, 'sequences')).items).toEqual(o.sequences(3, 1, w));
    expect((await h.get(`/v1/agents/L/tools?${q}`)).body.tool_frequency).toEqual(o.agent('L', w).tool_frequency);
    expect((await h.get(`/v1/calls/expensive?${q}&threshold_usd=0`)).body.count).toBe(o.expensive(0, w).count);
  });

  it('returns call ids in ClickHouse UUID order on equal timestamps (the documented tiebreak)', () => {
    // Sanity of the oracle itself: second half of the UUID first.
    expect(uuidKey('00000000-0000-0001-0000-000000000000') < uuidKey('00000000-0000-0000-0000-000000000001')).toBe(true);
  });

  it('refuses cursors that are malformed or belong to another list', async () => {
    const p = await h.get('/v1/calls/failed?limit=1');
    const foreign = p.body.next_cursor as string;
    expect((await h.get(`/v1/calls/slow?cursor=${foreign}`)).status).toBe(400);
    expect((await h.get('/v1/calls/slow?cursor=bm90LWpzb24')).status).toBe(400);
    expect((await h.get('/v1/calls/slow?cursor=%%%')).status).toBe(400);
    const forged = Buffer.from(JSON.stringify(['failed', [-1, "x' OR 1=1"]])).toString('base64url');
    expect((await h.get(`/v1/calls/failed?cursor=${forged}`)).status).toBe(400);
  });

  it('records request latency per route and query latency per query', async () => {
    const m = (await h.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${READ_KEY}` } })).body;
    expect(m).toMatch(/tool_audit_http_request_seconds_count\{method="GET",route="\/v1\/tasks\/:task_id",status="200"\} \d+/);
    expect(m).toMatch(/tool_audit_query_seconds_count\{query="dedup_candidates(_indexed)?"\} \d+/);
  });
});
