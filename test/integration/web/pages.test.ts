/**
 * The web app in a real browser (the machine's Chromium through playwright-core) against a real
 * `tool-audit serve` over embedded ClickHouse, with API keys configured and the demo workload
 * posted by `tool-audit demo`: the key prompt and no data without a valid key; every page opened
 * by its own URL at 1280×800; the waterfall's list items equal the task's calls of GET
 * /v1/tasks/{id}; the tool table equals GET /v1/tools; a click-through from a tool to a task.
 * Screenshots go to test-results/web/ (WEB_SCREENSHOT_DIR).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelCost, TaskList, TaskView, ToolsSummary, ToolStats, Violations } from '../../../schemas/answers.ts';
import { formatCount, formatMs, formatPct, formatUsd } from '../../../web/app/format.ts';
import { taskModel } from '../../../web/app/task-model.ts';
import { DEMO_MANIFEST } from '../../../cli/demo-manifest.ts';
import { outputArtifact, toolCall } from '../../helpers/packets.ts';
import { chromiumPath, launchChromium, loadDemo, startServe, type ServeProcess } from '../../helpers/web.ts';

const KEY = 'web-test-key-0123456789abcdef';
const READ_ONLY_KEY = 'web-test-read-only-key-0123456789';
const SHOTS = process.env.WEB_SCREENSHOT_DIR ?? join(new URL('../../../', import.meta.url).pathname, 'test-results/web');
const hasChromium = chromiumPath() !== undefined;
if (!hasChromium) console.warn('web tests skipped: no Chromium (apt-get install chromium, or set CHROMIUM_PATH)');

let server: ServeProcess;
let browser: Browser;
let authed: BrowserContext;

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

async function open(page: Page, path: string): Promise<void> {
  await page.goto(`${server.url}${path}`);
  await page.waitForSelector('main[aria-busy="false"]');
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });

describe.skipIf(!hasChromium)('web app in Chromium', () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // The auditor every half second and without its grace period: the planted violations below are found quickly.
    [server, browser] = await Promise.all([startServe({ apiKeys: `${KEY}:ingest,read,admin;${READ_ONLY_KEY}:read`, env: { AUDIT_INTERVAL_MS: '500', AUDIT_GRACE_MS: '0' } }), launchChromium()]);
    await loadDemo(server.url, { tasks: 25, seed: 17, hours: 6, apiKey: KEY });
    authed = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await authed.addInitScript({ content: `sessionStorage.setItem('tool-audit.api-key', ${JSON.stringify(KEY)})` });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('asks for an API key, refuses a wrong one, and shows data only after a valid one', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/tools`);
    const dialog = page.getByRole('dialog', { name: 'API key required' });
    await dialog.waitFor();
    expect(await page.locator('[data-testid="tool-table"]').count()).toBe(0);
    await shot(page, 'api-key-prompt');
    await dialog.getByLabel('API key').fill('not-a-valid-key-000000');
    await dialog.getByRole('button', { name: 'Use key' }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('unknown API key');
    expect(await page.locator('[data-testid="tool-table"]').count()).toBe(0);
    await dialog.getByLabel('API key').fill(KEY);
    await dialog.getByRole('button', { name: 'Use key' }).click();
    await page.locator('[data-testid="tool-table"]').waitFor();
    expect(await page.getByRole('dialog').count()).toBe(0);
    await context.close();
  });

  it('lists recent tasks and opens one by the search box: the waterfall has one bar per call, with its text', async () => {
    const page = await authed.newPage();
    await open(page, '/tasks');
    const tasks = (await api<TaskList>('/v1/tasks?limit=500')).tasks;
    const rows = page.locator('[data-testid="task-table"] tbody tr');
    expect(await rows.count()).toBe(tasks.length);
    expect(await rows.locator('td:first-child').allTextContents()).toEqual(tasks.map((t) => t.task_id));
    await shot(page, 'tasks');

    const id = tasks.reduce((a, b) => (b.calls > a.calls ? b : a)).task_id;
    await page.getByRole('search', { name: 'Find a task' }).first().getByRole('searchbox').fill(id);
    await page.getByRole('search', { name: 'Find a task' }).first().getByRole('button', { name: 'Open task' }).click();
    await page.waitForURL(`**/tasks/${id}`);
    await page.waitForSelector('main[aria-busy="false"]');

    const view = await api<TaskView>(`/v1/tasks/${id}?limit=1000`);
    const violations = await api<Violations>(`/v1/violations?limit=1000&from=${view.invocations[0]?.created_at}`);
    const model = taskModel(view, violations.violations);
    const bars = page.getByRole('list', { name: `Calls of task ${id}, in call order` }).getByRole('listitem');
    expect(await bars.count()).toBe(view.invocations.length);
    expect(await bars.allTextContents()).toEqual(model.bars.map((b) => b.label));
    expect(await bars.evaluateAll((els) => els.map((e) => e.getAttribute('data-call-id')))).toEqual(view.invocations.map((c) => c.call_id));
    const totals = page.getByLabel('Task totals');
    expect(await totals.textContent()).toContain(`calls${formatCount(view.invocations.length)}`);
    expect(await totals.textContent()).toContain(`failed calls${view.invocations.filter((c) => c.status !== 'success').length}`);
    expect(await totals.textContent()).toContain(`cost${formatUsd(model.totals.costUsd)}`);

    const second = view.invocations[1];
    if (!second) throw new Error('task with one call');
    await bars.nth(1).getByRole('button').click();
    const detail = page.getByTestId('call-detail');
    expect(await detail.textContent()).toContain(second.call_id);
    expect(await detail.locator('pre.json').first().textContent()).toBe(JSON.stringify(second.args, null, 2));
    const output = view.outputs.find((o) => o.call_id === second.call_id);
    if (output?.sample) expect(await detail.locator('pre.sample').first().textContent()).toBe(output.sample);
    expect(page.url()).toContain(`?call=${second.call_id}`);
    await shot(page, 'task');
    await page.close();
  });

  it('shows the tool table of GET /v1/tools, sortable, with sparklines, and clicks through from a tool to a task', async () => {
    const page = await authed.newPage();
    await open(page, '/tools');
    const { tools } = await api<ToolsSummary>('/v1/tools?limit=1000');
    const table = page.getByTestId('tool-table');
    const rows = table.locator('tbody tr');
    const text = async () => (await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 7).map((td) => td.textContent))));
    expect(await text()).toEqual(tools.map((t) => [t.tool_id, t.server, formatCount(t.invocations), formatPct(t.success_rate), formatMs(t.avg_duration_ms), formatMs(t.p95_duration_ms), formatUsd(t.total_cost_usd)]));
    for (const t of tools) {
      const label = await table.getByRole('row', { name: new RegExp(`^${t.tool_id} `) }).getByRole('img').first().getAttribute('aria-label');
      expect(label).toMatch(new RegExp(`^calls per \\d+ min: peak \\d+, total ${t.invocations}$`));
    }
    await shot(page, 'tools');
    await table.getByRole('button', { name: 'cost', exact: true }).click();
    expect(await table.getByRole('columnheader', { name: 'cost', exact: true }).getAttribute('aria-sort')).toBe('descending');
    expect(await rows.locator('td:first-child').allTextContents()).toEqual([...tools].sort((a, b) => b.total_cost_usd - a.total_cost_usd).map((t) => t.tool_id));

    await table.getByRole('link', { name: 'fetch_url' }).click();
    await page.waitForURL('**/tools/fetch_url');
    await page.waitForSelector('main[aria-busy="false"]');
    const stats = await api<ToolStats>('/v1/tools/fetch_url/stats?limit=20');
    const errors = page.getByTestId('error-table').locator('tbody tr');
    expect(await errors.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)))).toEqual(
      Object.entries(stats.error_distribution).map(([m, n]) => [m, formatCount(n)]),
    );
    await shot(page, 'tool');
    const slowest = page.getByTestId('slow-table').locator('tbody tr').first().getByRole('link');
    const href = (await slowest.getAttribute('href')) as string;
    const callId = new URL(href, server.url).searchParams.get('call');
    await slowest.click();
    await page.waitForURL(`**${href}`);
    await page.waitForSelector('main[aria-busy="false"]');
    const pressed = page.locator('.bar-hits li').filter({ has: page.locator('button[aria-pressed="true"]') });
    expect(await pressed.getAttribute('data-call-id')).toBe(callId);
    expect(await pressed.textContent()).toMatch(/fetch_url · timeout · 30\.\d s/);
    await page.close();
  });

  it('shows dedup candidates and identical outputs with example tasks, the cache simulation (TTL curve and per tool) and spend against budgets', async () => {
    const page = await authed.newPage();
    await open(page, '/waste');
    const dedup = await api<{ groups: unknown[]; totals: { duplicate_calls: number } }>('/v1/dedup/candidates?limit=100');
    const identical = await api<{ groups: unknown[] }>('/v1/outputs/identical?limit=100');
    expect(await page.getByTestId('dedup-table').locator('tbody tr').count()).toBe(dedup.groups.length);
    expect(await page.getByTestId('identical-table').locator('tbody tr').count()).toBe(identical.groups.length);
    expect(await page.getByLabel('Dedup totals').textContent()).toContain(`repeated calls${formatCount(dedup.totals.duplicate_calls)}`);
    await expect.poll(() => page.locator('[data-testid="dedup-table"] .examples a').count()).toBeGreaterThan(0);
    // The cache simulation and budgets are served: their sections show, in order.
    await expect.poll(() => page.locator('[data-optional-section]').evaluateAll((els) => els.map((e) => e.getAttribute('data-optional-section')))).toEqual(['cache-ttl', 'cache-simulation', 'budgets']);
    // The demo applied its manifest (admin key): the simulation lists every tool the API lists.
    const sim = await api<{ tools: unknown[] }>('/v1/cache/simulation');
    expect(sim.tools.length).toBeGreaterThan(0);
    await expect.poll(() => page.locator('[data-optional-section="cache-simulation"] tbody tr').count()).toBe(sim.tools.length);
    await shot(page, 'waste');
    await page.locator('[data-testid="dedup-table"] .examples a').first().click();
    await page.waitForURL('**/tasks/demo-17-*');
    await page.waitForSelector('.bar-hits li');
    await page.close();
  });

  it("shows a task's violations even when over a thousand newer ones of other tasks were found after them", async () => {
    const post = async (packets: object[]) => {
      const res = await fetch(`${server.url}/v1/packets`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(packets) });
      expect(res.status).toBe(200);
    };
    const failedWithoutError = (task: string, i: number) => toolCall({ status: 'error', error: null, created_at: new Date(Date.now() - 60_000 + i).toISOString() }, task);
    const target = failedWithoutError('planted-target', 0);
    await post([toolCall({ created_at: new Date(Date.now() - 120_000).toISOString() }, 'planted-target'), target]);
    await expect.poll(async () => (await api<Violations>('/v1/violations?task_id=planted-target&from=1970-01-01')).violations.map((v) => v.ids), { timeout: 30_000 }).toEqual([[target.call_id]]);
    const others = Array.from({ length: 1050 }, (_, i) => failedWithoutError(`planted-other-${i % 50}`, i + 1));
    await post(others);
    await expect.poll(async () => (await api<Violations>('/v1/violations?invariant=I4&limit=1&from=1970-01-01')).counts.I4 ?? 0, { timeout: 60_000 }).toBeGreaterThanOrEqual(1051);
    // What the page read before: the newest 1,000 of the store, which no longer hold the target's.
    const newest = await api<Violations>('/v1/violations?limit=1000&from=1970-01-01');
    expect(newest.violations.some((v) => v.ids.includes(target.call_id))).toBe(false);
    expect((await api<Violations>(`/v1/violations?call_id=${target.call_id}&from=1970-01-01`)).violations.map((v) => v.invariant)).toEqual(['I4']);

    const page = await authed.newPage();
    await open(page, '/tasks/planted-target');
    const section = page.getByRole('region', { name: 'Violations of this task' });
    expect(await section.getByRole('heading').textContent()).toBe('Violations (1)');
    expect(await section.getByRole('listitem').allTextContents()).toEqual([expect.stringContaining('I4') as unknown as string]);
    expect(await page.getByLabel('Task totals').textContent()).toContain('violations1');
    await page.close();
  }, 120_000);

  it('lists violations filtered by rule and task, each call linking to its task page, page by page, and fits a phone', async () => {
    // The planted violations of the test above: one of planted-target, 1,050 of planted-other-*.
    const page = await authed.newPage();
    await open(page, '/violations?hours=1&invariant=I4&task=planted-target');
    const target = await api<Violations>('/v1/violations?invariant=I4&task_id=planted-target&from=1970-01-01');
    expect(target.violations.map((v) => v.task_id)).toEqual(['planted-target']);
    const rows = page.getByTestId('violation-table').locator('tbody tr');
    expect(await rows.count()).toBe(1);
    const call = target.violations[0]?.ids[0] as string;
    expect(await rows.first().getByRole('link', { name: call.slice(0, 12) }).getAttribute('href')).toBe(`/tasks/planted-target?call=${call}`);
    await shot(page, 'violations-filtered');
    // By tool: the planted target's call is search_web's; no finding names a call of a tool never called.
    await open(page, '/violations?hours=1&invariant=I4&task=planted-target&tool=search_web');
    expect(await rows.count()).toBe(1);
    await open(page, '/violations?hours=1&tool=no-such-tool');
    expect(await page.getByRole('status').textContent()).toBe('No violations in this window.');
    await open(page, '/violations?hours=1&invariant=I4&task=planted-target');
    await rows.first().getByRole('link', { name: call.slice(0, 12) }).click();
    await page.waitForURL(`**/tasks/planted-target?call=${call}`);
    await page.waitForSelector('main[aria-busy="false"]');

    // Unfiltered: the counts of the window, a page of 100 newest first, and the next page.
    await open(page, '/violations?hours=1');
    const all = await api<Violations>(`/v1/violations?limit=100&from=${new Date(Date.now() - 3_600_000).toISOString()}`);
    expect(await page.getByLabel('Violations per invariant').textContent()).toContain(`I4${formatCount(all.counts.I4 ?? 0)}`);
    expect(await rows.count()).toBe(100);
    await shot(page, 'violations');
    const firstPage = await rows.locator('td:nth-child(6)').allTextContents();
    await page.getByRole('link', { name: 'Older violations →' }).click();
    await page.waitForURL('**/violations?*cursor=*');
    await page.waitForSelector('main[aria-busy="false"]');
    const secondPage = await rows.locator('td:nth-child(6)').allTextContents();
    expect(secondPage.length).toBeGreaterThan(0);
    expect(secondPage.some((t) => firstPage.includes(t))).toBe(false);
    // The filter form puts its choice in the URL.
    await page.locator('#task').fill('planted-target');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL('**/violations?*task=planted-target*');
    await page.close();

    // A phone-width window: nothing wider than the screen but the tables, which scroll in their frame.
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
    await phone.addInitScript({ content: `sessionStorage.setItem('tool-audit.api-key', ${JSON.stringify(KEY)})` });
    const small = await phone.newPage();
    await open(small, '/violations?hours=1');
    expect(await small.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await shot(small, 'violations-phone');
    for (const path of ['/tasks', '/tools', '/waste', '/hints?hours=168', '/quarantine?hours=168', '/manifests', '/search?q=passwd']) {
      await open(small, path);
      expect(await small.evaluate('document.documentElement.scrollWidth'), path).toBeLessThanOrEqual(390);
    }
    await phone.close();
  }, 60_000);

  it('shows a task\'s model turns between its calls: each turn\'s model, tokens and cost, the calls it asked for, and the turn on the call; the task named by its agent run', async () => {
    const task = `turns-${randomUUID()}`;
    const at = (s: number) => new Date(Date.now() - 600_000 + s * 1000).toISOString();
    const lookup = toolCall({ tool_id: 'lookup', args: { key: 'k1' }, created_at: at(3), result_summary: { tool_call_id: 'tc-1' } }, task);
    const fetchUrl = toolCall({ tool_id: 'fetch_url', args: { url: 'https://a.example' }, created_at: at(4) }, task);
    const turn = (s: number, model: string, inTok: number, outTok: number, asked: Array<{ id: string | null; tool_id: string }>) => ({
      type: 'model_turn',
      turn: { turn_id: randomUUID(), task_id: task, agent_id: 'planner', model, provider: 'openai', input_tokens: inTok, output_tokens: outTok, cached_input_tokens: null, cost_usd: null, cost_source: null, duration_ms: 900, status: 'success', error: null, requested_tool_calls: asked, trace_id: null, span_id: null, created_at: at(s) },
    });
    // The agent run that names the task, and a sub-agent started under it.
    const run = (name: string, agent: string, s: number, e: number, span: string, parent: string | null) => ({
      type: 'agent_run',
      run: { run_id: randomUUID(), task_id: task, agent_id: agent, name, duration_ms: (e - s) * 1000, status: 'success', error: null, trace_id: '5b8efff798038103d269b633813fc60c', span_id: span, parent_span_id: parent, created_at: at(e) },
    });
    const runs = [run('look up the order', 'researcher', 2, 5, '00f067aa0ba902b7', 'eee19b7ec3c1b174'), run('Refund request', 'planner', 0, 8, 'eee19b7ec3c1b174', null)];
    // The first turn keeps its messages (a deployment with OTLP_TURN_MESSAGES=on).
    const said = '{"gen_ai.input.messages":"[{\\"role\\":\\"user\\",\\"parts\\":[{\\"type\\":\\"text\\",\\"content\\":\\"refund order 7\\"}]}]"}';
    const first = turn(1, 'gpt-4o', 1200, 40, [{ id: 'tc-1', tool_id: 'lookup' }, { id: null, tool_id: 'fetch_url' }]);
    const sent = [lookup, fetchUrl, { ...first, turn: { ...first.turn, messages: said } }, turn(6, 'gpt-4o', 1500, 90, []), ...runs];
    const res = await fetch(`${server.url}/v1/packets`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(sent) });
    expect(res.status).toBe(200);
    const view = await api<TaskView>(`/v1/tasks/${task}?limit=1000`);
    expect(view.model_turns.map((t) => t.requested_tool_calls.map((q) => q.call_id))).toEqual([[lookup.call_id, fetchUrl.call_id], []]);
    const model = taskModel(view, []);

    const page = await authed.newPage();
    await open(page, `/tasks/${task}`);
    const turns = page.getByLabel('Model turns of this task').getByRole('listitem');
    expect(await turns.locator('.turn-label').allTextContents()).toEqual(model.turns.map((t) => t.label));
    expect(await turns.locator('.turn-messages pre').allTextContents()).toEqual([said]);
    // Named after its outer run; the sub-agent listed under it.
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Refund request task ${task}`);
    const runItems = page.getByLabel('Agent runs of this task').getByRole('listitem');
    expect(await runItems.allTextContents()).toEqual(['Refund request · agent planner · success · 8.00 s', 'look up the order · agent researcher · success · 3.00 s']);
    expect(await runItems.evaluateAll((li) => li.map((x) => (x as unknown as { style: { marginLeft: string } }).style.marginLeft))).toEqual(['0em', '1.25em']);
    // Worked out by hand from the table: gpt-4o at 2.5 in / 10 out per million tokens.
    expect(model.turns.map((t) => t.turn.cost_usd)).toEqual([(1200 * 2.5 + 40 * 10) / 1e6, (1500 * 2.5 + 90 * 10) / 1e6]);
    const totals = await page.getByLabel('Task totals').textContent();
    expect(totals).toContain('model turns2');
    expect(totals).toContain(`model tokens${formatCount(2700)} in / ${formatCount(130)} out`);
    await turns.first().getByRole('button', { name: '→ #2 fetch_url' }).click();
    const detail = page.getByTestId('call-detail');
    expect(await detail.textContent()).toContain(fetchUrl.call_id);
    expect(await detail.getByTestId('asked-by').textContent()).toBe('model turn 1 (gpt-4o)');
    await shot(page, 'task-model-turns');

    // The task list: this task's row carries its turns beside its tool cost, as worked out above.
    await open(page, '/tasks');
    const row = page.getByTestId('task-table').getByRole('row', { name: new RegExp(`^Refund request ${task} `) });
    const cells = await row.locator('td').allTextContents();
    const wantCost = (1200 * 2.5 + 40 * 10 + 1500 * 2.5 + 90 * 10) / 1e6;
    expect(cells.slice(4, 8)).toEqual([formatUsd(0.002 * 2), formatCount(2), `${formatCount(2700)} / ${formatCount(130)}`, formatUsd(wantCost)]);
    // The tools page: model cost per model and per agent, as GET /v1/cost/models answers.
    await open(page, '/tools');
    const cost = await api<ModelCost>(`/v1/cost/models?limit=100&from=${new Date(Date.now() - 24 * 3_600_000).toISOString()}`);
    const gpt = cost.models.find((m) => m.model === 'gpt-4o');
    expect(gpt?.turns).toBeGreaterThanOrEqual(2);
    const modelRows = await page.getByTestId('model-table').locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(modelRows).toEqual(cost.models.map((m) => [m.model, m.provider ?? '', formatCount(m.turns), `${formatCount(m.input_tokens)} / ${formatCount(m.output_tokens)}`, formatUsd(m.cost_usd)]));
    const planner = await page.getByTestId('agent-cost-table').getByRole('row', { name: /^planner / }).locator('td').allTextContents();
    const p = cost.agents.find((a) => a.agent_id === 'planner');
    expect(planner).toEqual(['planner', formatCount(p!.turns), `${formatCount(p!.input_tokens)} / ${formatCount(p!.output_tokens)}`, formatUsd(p!.cost_usd), formatCount(p!.tool_calls), formatUsd(p!.tool_cost_usd)]);
    await shot(page, 'tools-model-cost');
    await page.close();
  });

  it('lists optimization hints by kind with the evidence each rests on', async () => {
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
    const hint = (kind: string, toolIds: string[], evidence: object, minutesAgo: number) => ({
      type: 'optimization_hint',
      hint: { hint_id: randomUUID(), kind, tool_ids: toolIds, task_ids_sample: ['demo-task-a'], evidence, estimated_savings_ms: 65_000, estimated_savings_usd: 1.25, window_from: at(120), window_to: at(60), created_at: at(minutesAgo) },
    });
    const sent = [hint('cache_candidate', ['search_web'], { ttl_ms: 300_000, hits: 12, calls: 40 }, 5), hint('retry_storm', ['deploy'], { tasks: 3, retried_failures: 9, errors: { 'HTTP 503': 7 } }, 4), hint('bundle_candidate', ['fetch_url', 'parse'], { count: 18, median_gap_ms: 40 }, 3)];
    const res = await fetch(`${server.url}/v1/packets`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(sent) });
    expect(res.status).toBe(200);
    const page = await authed.newPage();
    await open(page, '/hints?hours=1');
    const listed = await api<{ hints: Array<{ hint_id: string }> }>(`/v1/hints?limit=100&from=${at(60)}`);
    const rows = page.getByTestId('hint-table').locator('tbody tr');
    expect(await rows.count()).toBe(listed.hints.length);
    const storm = rows.filter({ hasText: 'retry storm' });
    expect(await storm.locator('.evidence li').allTextContents()).toEqual(['tasks: 3', 'retried_failures: 9', 'errors: HTTP 503 7']);
    expect(await storm.getByRole('link', { name: 'deploy' }).getAttribute('href')).toBe('/tools/deploy');
    await storm.getByText('as recorded').click();
    expect(JSON.parse((await storm.locator('pre').textContent()) ?? '')).toEqual({ tasks: 3, retried_failures: 9, errors: { 'HTTP 503': 7 } });
    await shot(page, 'hints');
    await page.getByLabel('Kind').selectOption('bundle_candidate');
    await page.waitForURL('**/hints?*kind=bundle_candidate*');
    await page.waitForSelector('main[aria-busy="false"]');
    const bundles = await rows.allTextContents();
    expect(bundles.some((t) => t.includes('fetch_url → parse'))).toBe(true);
    expect(bundles.every((t) => t.includes('bundle candidate'))).toBe(true);
    await page.close();
  });

  it('shows the manifest in force, a tool\'s versions with what changed, and the MCP servers with their definition changes', async () => {
    const send = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBe(200);
    };
    // The demo applied its manifest; a second version changes search_web's timeout and cache TTL.
    await send('PUT', '/v1/manifests', { ...DEMO_MANIFEST, search_web: { ...DEMO_MANIFEST.search_web, timeout_ms: 20_000, cache_ttl_ms: 1_800_000 } });
    const report = (description: string, seenAt: string) => send('POST', '/v1/mcp/tools', { server: 'files', server_info: { name: 'files-impl', version: '1.0.0' }, tools: [{ name: 'read_file', description, inputSchema: { type: 'object' } }], seen_at: seenAt });
    await report('Read a file', new Date(Date.now() - 60_000).toISOString());
    await report('Read a file, and send it elsewhere', new Date().toISOString());
    const current = await api<{ version: number; tools: Record<string, unknown> }>('/v1/manifests');

    const page = await authed.newPage();
    await open(page, '/manifests');
    expect(await page.getByLabel('Manifest in force').textContent()).toContain(`version${current.version}`);
    expect(await page.getByTestId('manifest-table').locator('tbody tr').count()).toBe(Object.keys(current.tools).length);
    const files = page.getByTestId('mcp-files').locator('tbody tr');
    expect(await files.count()).toBe(1);
    expect(await files.first().locator('td').allTextContents()).toEqual(['files/read_file', '2', expect.any(String) as unknown as string, expect.any(String) as unknown as string, 'listed']);
    await page.getByTestId('manifest-table').getByRole('link', { name: 'search_web' }).click();
    await page.waitForURL('**/manifests?tool=search_web');
    await page.waitForSelector('main[aria-busy="false"]');
    const history = await api<{ versions: Array<{ version: number }> }>('/v1/manifests/search_web/history');
    const versions = page.getByTestId('version-table').locator('tbody tr');
    expect(await versions.count()).toBe(history.versions.length);
    // The newest version that changed search_web says what changed, and nothing else.
    const changed = versions.filter({ hasText: 'timeout_ms' }).first();
    expect(await changed.locator('.changes li').allTextContents()).toEqual(['timeout_ms: 15000 → 20000', 'cache_ttl_ms: 3600000 → 1800000']);
    await shot(page, 'manifests');
    await page.close();
  });

  it('lists quarantined packets by reason, shows one byte for byte, and replays it as it is and corrected (with the ingest scope only)', async () => {
    const good = toolCall({ created_at: new Date(Date.now() - 30_000).toISOString() }, 'quarantine-page');
    const bad = { ...good, invocation: { ...good.invocation, args_hash: 'f'.repeat(64) } };
    const sentText = JSON.stringify(bad);
    const res = await fetch(`${server.url}/v1/packets`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: `[${sentText}]` });
    const verdict = ((await res.json()) as { results: Array<{ status: string; reason?: { code: string } }> }).results[0];
    expect(verdict?.status).toBe('rejected');
    const code = verdict?.reason?.code as string;
    const listed = await api<{ records: Array<{ quarantine_id: string; ids: string[] }>; counts: Record<string, number> }>(`/v1/quarantine?reason=${code}&from=${new Date(Date.now() - 3_600_000).toISOString()}`);
    const record = listed.records.find((r) => r.ids.includes(good.call_id));
    expect(record).toBeDefined();

    const page = await authed.newPage();
    await open(page, `/quarantine?hours=1&reason=${code}`);
    const rows = page.getByTestId('quarantine-table').locator('tbody tr');
    expect(await rows.count()).toBe(listed.records.length);
    expect(await page.getByLabel('Quarantined packets per reason').textContent()).toContain(`${code}${formatCount(listed.counts[code] ?? 0)}`);
    await shot(page, 'quarantine');
    await open(page, `/quarantine?id=${encodeURIComponent(record?.quarantine_id as string)}`);
    expect(await page.getByTestId('raw').textContent()).toBe(sentText);
    await page.getByRole('button', { name: 'Replay as it is' }).click();
    await expect.poll(() => page.getByRole('status').last().textContent()).toContain(`Still rejected: ${code}`);
    await page.waitForSelector('[data-testid="replay-table"]');
    // The producer's fix: the packet with its right args_hash lands.
    await page.getByLabel('The producer’s corrected packet').fill(JSON.stringify(good));
    await page.getByRole('button', { name: 'Replay corrected' }).click();
    await expect.poll(() => page.getByRole('status').last().textContent()).toContain('Replayed: accepted');
    await expect.poll(async () => (await api<{ invocations: Array<{ call_id: string }> }>('/v1/tasks/quarantine-page')).invocations.map((c) => c.call_id)).toEqual([good.call_id]);
    await expect.poll(async () => (await page.getByTestId('replay-table').locator('tbody tr').allTextContents()).length, { timeout: 10_000 }).toBe(2);
    await shot(page, 'quarantine-packet');
    await page.close();

    // A key that may read but not ingest sees the packet and is told why it cannot replay it.
    const readOnly = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await readOnly.addInitScript({ content: `sessionStorage.setItem('tool-audit.api-key', ${JSON.stringify(READ_ONLY_KEY)})` });
    const ro = await readOnly.newPage();
    await open(ro, `/quarantine?id=${encodeURIComponent(record?.quarantine_id as string)}`);
    await ro.getByRole('button', { name: 'Replay as it is' }).click();
    await expect.poll(() => ro.getByRole('status').last().textContent()).toBe('This key cannot replay: a replay needs a key with the ingest scope.');
    expect((await api<{ record: { replays: unknown[] } }>(`/v1/quarantine/${encodeURIComponent(record?.quarantine_id as string)}`)).record.replays.length).toBe(2);
    await readOnly.close();
  }, 60_000);

  it('searches args, outputs and errors from the box on every page, each hit linking to its call', async () => {
    const now = Date.now();
    const hitA = toolCall({ args: { path: '/srv/ledger/zyx-7731.csv', note: 'café' }, created_at: new Date(now - 20_000).toISOString() }, 'search-page-a');
    const hitB = toolCall({ status: 'error', error: 'ledger zyx-7731 locked by another writer', result_summary: {}, created_at: new Date(now - 10_000).toISOString() }, 'search-page-b');
    const res = await fetch(`${server.url}/v1/packets`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify([hitA, hitB]) });
    expect(res.status).toBe(200);
    const page = await authed.newPage();
    await open(page, '/tools');
    await page.getByLabel('Search', { exact: true }).fill('zyx-7731');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL('**/search?q=zyx-7731');
    await page.waitForSelector('main[aria-busy="false"]');
    const api_ = await api<{ hits: Array<{ call_id: string; field: string }> }>(`/v1/search?q=zyx-7731&from=${new Date(now - 86_400_000).toISOString()}`);
    expect(api_.hits.map((h) => [h.call_id, h.field])).toEqual([[hitB.call_id, 'error'], [hitA.call_id, 'args']]);
    const rows = page.getByTestId('search-table').locator('tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).locator('td').nth(1).textContent()).toBe('error');
    expect(await rows.nth(1).locator('mark').allTextContents()).toEqual(['zyx', '7731']);
    await shot(page, 'search');
    await rows.nth(1).getByRole('link', { name: hitA.call_id.slice(0, 8) }).click();
    await page.waitForURL(`**/tasks/search-page-a?call=${hitA.call_id}`);
    // Filters: only errors.
    await open(page, '/search?q=zyx-7731&status=error');
    expect(await rows.count()).toBe(1);
    await page.close();
  });

  it("shows a call's full output content on request, and its approval", async () => {
    const call = toolCall({ created_at: new Date(Date.now() - 60_000).toISOString(), approval: { approved_by: 'dana', approved_at: '2026-11-22T10:00:00Z', reference: 'CHG-7' } }, 'long-output');
    const content = `${'Zürich 😀 '.repeat(200)}— the end`;
    const res = await fetch(`${server.url}/v1/packets`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify([call, outputArtifact(call.call_id, content, 'text')]) });
    expect(res.status).toBe(200);
    const page = await authed.newPage();
    await open(page, `/tasks/long-output?call=${call.call_id}`);
    const detail = page.getByTestId('call-detail');
    expect(await detail.textContent()).toContain('dana at');
    const shown = detail.getByTestId('output-content');
    expect((await shown.textContent())?.length).toBeLessThan(content.length);
    await detail.getByTestId('full-content').click();
    await expect.poll(() => shown.textContent()).toBe(content);
    await page.close();
  });

  it('keeps secrets sent over HTTP out of the task view and its page, and shows where they were', async () => {
    const secret = 'AKIAIOSFODNN7EXAMPLE';
    const token = `ghp_${'Q1w2E3r4T5'.repeat(4)}`;
    const call = toolCall({ created_at: new Date(Date.now() - 30_000).toISOString(), args: { query: `rotate ${secret}`, headers: { auth: `token ${token}` } } }, 'with-secrets');
    const res = await fetch(`${server.url}/v1/packets`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify([call]) });
    expect(res.status).toBe(200);
    const view = await api<{ invocations: Array<{ args: { query: string }; redactions: unknown }> }>('/v1/tasks/with-secrets');
    expect(JSON.stringify(view)).not.toContain(secret);
    expect(JSON.stringify(view)).not.toContain(token);
    expect(view.invocations[0]?.args.query).toMatch(/^rotate \[redacted:aws_access_key:[0-9a-f]{16}\]$/);
    expect(view.invocations[0]?.redactions).toEqual([
      { pointer: '/args/headers/auth', rule: 'github_token' },
      { pointer: '/args/query', rule: 'aws_access_key' },
    ]);
    const page = await authed.newPage();
    await open(page, `/tasks/with-secrets?call=${call.call_id}`);
    const shown = await page.getByTestId('redactions').textContent();
    expect(shown).toBe('/args/headers/auth (github_token), /args/query (aws_access_key)');
    const text = (await page.content()) + ((await page.locator('body').textContent()) ?? '');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(token);
    await page.close();
  });

  it('answers every page URL with the app (deep links), and an unknown one inside the app with "Not found"', async () => {
    for (const path of ['/', '/tasks', '/tools', '/waste', '/violations', '/hints', '/quarantine', '/manifests', '/search', '/tools/search_web', '/tasks/no-such-task']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    }
    const page = await authed.newPage();
    await open(page, '/tasks/no-such-task');
    expect(await page.getByRole('status').textContent()).toBe('No calls recorded for this task.');
    await page.close();
  });
});
