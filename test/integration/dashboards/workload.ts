/**
 * A generated workload that gives every dashboard panel something to show: tasks that chain
 * search → fetch → python → chart over the last hour, failures of every status, retries with
 * identical args (dedup candidates), identical outputs, expensive calls, a data flow, calls
 * without a task, emitted dependencies, packets that break MUST rules (quarantine) and ones that
 * break SHOULD / cross-segment rules (violations). Deterministic for a seed.
 */
import { randomUUID } from 'node:crypto';
import { createAuditor } from '../../../analyzers/auditor.ts';
import { createDependencyAnalyzer } from '../../../analyzers/dependency-runner.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import type { RawPacket } from '../../../ingest/rows.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { applyManifest } from '../../../analyzers/manifest-store.ts';
import { parseManifest } from '../../../schemas/tool-manifest.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { dependency, outputArtifact, toolCall } from '../../helpers/packets.ts';
import { createClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { createBudgetService } from '../../../api/budgets/service.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { rng } from '../../helpers/rng.ts';

const AGENTS = ['L', 'QA_Agent', 'Researcher'];
const FAILURES: Array<{ status: string; error: string }> = [
  { status: 'error', error: 'HTTP 500 from upstream' },
  { status: 'timeout', error: 'timed out after 30000 ms' },
  { status: 'rate_limited', error: '429 Too Many Requests' },
  { status: 'invalid_input', error: 'url must be absolute' },
  { status: 'error', error: 'HTTP 500 from upstream' },
];

/** What was generated, for assertions. */
export interface Workload {
  packets: RawPacket[];
  fromMs: number;
  toMs: number;
  tasks: string[];
  tools: string[];
  agents: string[];
}

/** Builds the packets of `tasks` tasks ending before `nowMs`. */
export function generateWorkload(opts: { seed?: number; tasks?: number; nowMs?: number } = {}): Workload {
  const rand = rng(opts.seed ?? 7);
  const now = opts.nowMs ?? Date.now();
  const start = now - 55 * 60_000;
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const objects: object[] = [];
  const taskIds: string[] = [];
  const iso = (ms: number) => new Date(ms).toISOString();
  const call = (task: string | null, tool: string, t: number, over: Record<string, unknown> = {}) => {
    const failure = rand() < 0.12 ? pick(FAILURES) : undefined;
    const p = toolCall(
      {
        tool_id: tool,
        agent_id: pick(AGENTS),
        orchestrator: pick(['gateway', 'kernel', 'websocket', 'scheduler']),
        duration_ms: Math.floor(50 + rand() * (tool === 'python_execute' ? 40_000 : 3000)),
        cost_usd: tool === 'python_execute' ? Math.round(rand() * 250) / 100 : Math.round(rand() * 50) / 1000,
        created_at: iso(t),
        ...(failure ?? {}),
        ...over,
      },
      task,
    );
    objects.push(p);
    return p;
  };

  const tasks = opts.tasks ?? 24;
  for (let k = 0; k < tasks; k++) {
    const task = `task-${k.toString().padStart(3, '0')}-${Math.floor(rand() * 1e6).toString(36)}`;
    taskIds.push(task);
    let t = start + Math.floor((k / tasks) * 50 * 60_000 + rand() * 30_000);
    const query = k % 3 === 0 ? 'quarterly revenue' : `topic ${k}`;
    const search = call(task, 'search_web', t, { args: { query, top_k: 10 }, status: 'success', error: null });
    const url = `https://example.com/report-${k}`;
    objects.push(outputOf(search.call_id, 'search_web', JSON.stringify({ urls: [url] }), 'json', iso(t + 100)));
    const searchAt = t;
    // A retry of the same search with identical args: a dedup candidate.
    if (k % 4 === 0) call(task, 'search_web', (t += 700), { args: { query, top_k: 10 } });
    const fetches = 1 + Math.floor(rand() * 2);
    for (let f = 0; f < fetches; f++) {
      const fetch = call(task, 'fetch_url', (t += 800 + Math.floor(rand() * 4000)), { args: { url } });
      if ((fetch.invocation as { status: string }).status === 'success') {
        // Identical page content across tasks: identical outputs.
        const page = k % 2 === 0 ? '<html><body>Annual report 2026</body></html>' : `<html><body>page ${k}</body></html>`;
        objects.push(outputOf(fetch.call_id, 'fetch_url', page, 'html', iso(t + 50)));
      }
    }
    const py = call(task, 'python_execute', (t += 1000 + Math.floor(rand() * 8000)), { args: { code: `analyse(${k})` } });
    if (k % 5 === 0) {
      // An emitted dependency (the analyzer links the same pair as a duplicate).
      objects.push(dependency({ task_id: task, preceding_call_id: search.call_id, succeeding_call_id: py.call_id, preceding_tool_id: 'search_web', succeeding_tool_id: 'python_execute', time_delta_ms: t - searchAt, data_flow: 'urls' }));
    }
    const chart = call(task, 'create_chart', (t += 500 + Math.floor(rand() * 3000)), { args: { kind: 'bar', series: k } });
    if ((chart.invocation as { status: string }).status === 'success') objects.push(outputOf(chart.call_id, 'create_chart', `chart-${k}`, 'chart_id', iso(t + 10)));
    // Some tasks go on after a long pause (no dependency: more than 60 s apart).
    if (k % 6 === 0) call(task, 'send_email', t + 90_000, { args: { to: 'ops@example.com' } });
  }
  // Calls without a task, an expensive one, and a slow one.
  call(null, 'search_web', start + 60_000, { args: { query: 'standalone' }, status: 'success', error: null, cost_usd: 1.75 });
  call(null, 'python_execute', start + 120_000, { args: { code: 'slow()' }, status: 'success', error: null, duration_ms: 45_000, cost_usd: 3.2 });
  // SHOULD / cross-segment violations: I4 (failure without error), I8 (output of no call).
  call('task-violations', 'fetch_url', start + 180_000, { args: { url: 'https://example.com/x' }, status: 'timeout', error: null });
  objects.push(outputOf(randomUUID(), 'fetch_url', 'orphan', 'text', iso(start + 181_000)));

  const packets: RawPacket[] = objects.map((o, index) => ({ raw: JSON.stringify(o), source: { kind: 'http', requestId: 'dashboards-workload', index } }));
  // MUST-rule breakers: quarantined.
  const badHash = toolCall({ created_at: iso(start + 200_000), args_hash: 'f'.repeat(64) }, 'task-bad');
  packets.push({ raw: JSON.stringify(badHash), source: { kind: 'http', requestId: 'dashboards-bad', index: 0 } });
  packets.push({ raw: '{"type": "tool_call", ', source: { kind: 'http', requestId: 'dashboards-bad', index: 1 } });
  return {
    packets,
    fromMs: start - 60_000,
    toMs: now + 5 * 60_000,
    tasks: taskIds,
    tools: ['search_web', 'fetch_url', 'python_execute', 'create_chart', 'send_email'],
    agents: AGENTS,
  };
}

function outputOf(callId: string, tool: string, content: string, type: string, createdAt: string) {
  const o = outputArtifact(callId, content, type);
  return { ...o, output: { ...o.output, tool_id: tool, created_at: createdAt } };
}

/** Ingests a workload through the segment writer, then runs the dependency analyzer and the auditor. */
export async function loadWorkload(ch: ClickHouseClient, db: string, w: Workload): Promise<void> {
  const metrics = new MetricsRegistry();
  const logger = silentLogger();
  const writer = createSegmentWriter({ clickhouse: createClickHouseDoor(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 0, metrics, logger });
  for (let i = 0; i < w.packets.length; i += 200) await writer.write(w.packets.slice(i, i + 200));
  // An optimization hint from a producer, so the hints panel has a row (the job's own are tested elsewhere).
  const hint = {
    type: 'optimization_hint',
    hint: {
      hint_id: '5d2f8a1c-0b3e-4c6d-9e7f-112233445566',
      kind: 'cache_candidate',
      tool_ids: ['search_web'],
      task_ids_sample: [],
      evidence: { ttl_ms: 300_000, hits: 3, calls: 10 },
      estimated_savings_ms: 4500,
      estimated_savings_usd: 0.03,
      window_from: new Date(w.fromMs).toISOString(),
      window_to: new Date(w.fromMs + 3_600_000).toISOString(),
      created_at: new Date(w.fromMs + 60_000).toISOString(),
    },
  };
  await writer.write([{ raw: JSON.stringify(hint), source: { kind: 'http', requestId: 'workload', index: 0 } }]);
  // Model turns of the first tasks' agents, so the model cost panel has rows (one model unpriced).
  const turns = w.tasks.slice(0, 6).map((task, i) => ({
    type: 'model_turn',
    turn: {
      turn_id: `7d2f8a1c-0b3e-4c6d-9e7f-1122334455${String(10 + i)}`,
      task_id: task,
      agent_id: w.agents[i % w.agents.length],
      model: i % 3 === 0 ? 'in-house-7b' : 'gpt-4o-mini',
      provider: 'openai',
      input_tokens: 1000 + i,
      output_tokens: 50,
      cached_input_tokens: null,
      cost_usd: null,
      cost_source: null,
      duration_ms: 700,
      status: 'success',
      error: null,
      requested_tool_calls: [{ id: null, tool_id: 'search_web' }],
      trace_id: null,
      span_id: null,
      created_at: new Date(w.fromMs + 120_000 + i * 1000).toISOString(),
    },
  }));
  await writer.write(turns.map((t, index) => ({ raw: JSON.stringify(t), source: { kind: 'http', requestId: 'workload-turns', index } })));
  // A manifest, so the cache panels have cacheable tools and the violations panels M rules.
  const manifest = parseManifest({
    search_web: { tool_id: 'search_web', idempotent: true, cache_ttl_ms: 300_000, rate_limit_rpm: 30 },
    fetch_url: { tool_id: 'fetch_url', idempotent: true, cache_ttl_ms: 60_000 },
    python_execute: { tool_id: 'python_execute', timeout_ms: 20_000 },
  });
  if (!manifest.ok) throw new Error(manifest.errors.join('; '));
  await applyManifest(createClickHouseDoor(ch, db), manifest.manifest, w.fromMs);
  const common = { clickhouse: createClickHouseDoor(ch, db), windowMs: 60_000, metrics, logger };
  await createDependencyAnalyzer({ ...common, overlapMs: 60_000 }).runOnce();
  await createAuditor({ ...common, graceMs: 0, now: () => Date.now() + 1000 }).runOnce();
  // Budgets: a set in force and checks that allow, warn and deny, recorded by the service.
  const budgets = createBudgetService({ clickhouse: createClickHouseDoor(ch, db), logger, ctx: DEFAULT_QUERY_CONTEXT, reservationTimeoutMs: 60_000, decisionsFlushMs: 10 });
  await budgets.start();
  await budgets.apply(
    [
      { budget_id: 'researcher-day', scope: { agent_id: 'Researcher' }, period: 'day', limit_usd: 0.05, mode: 'deny' },
      { budget_id: 'fetch-month', scope: { tool_id: 'fetch_url' }, period: 'month', limit_usd: 0.02, mode: 'warn' },
      { budget_id: 'all-month', scope: {}, period: 'month', limit_usd: 1000, mode: 'deny' },
    ],
    'open',
  );
  for (const [agent_id, tool_id, projected_cost_usd] of [['Researcher', 'search_web', 0.01], ['Researcher', 'search_web', 10], ['Writer', 'fetch_url', 1], ['Writer', 'summarize', 0.001]] as const) {
    await budgets.check({ agent_id, tool_id, projected_cost_usd }, 'open');
  }
  await budgets.close();
}
