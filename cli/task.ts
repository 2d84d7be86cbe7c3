/**
 * `tool-audit task <task_id>`: a task's calls as an ordered tree (dependencies are the edges;
 * a call without a recorded predecessor is a root), with status, duration and cost. Reads
 * ClickHouse directly, or a running server with --url / TOOL_AUDIT_URL (needed while `serve`
 * holds the embedded ClickHouse, which admits one process per data directory).
 */
import { createHttpReadQueries } from '../api/read-client.ts';
import { MAX_TIME_MS } from '../api/read-params.ts';
import { AppError } from '../platform/errors.ts';
import { createReadQueries, type ReadQueries } from '../queries/index.ts';
import type { TaskView } from '../schemas/answers.ts';
import { configOrExit, startRuntime } from './runtime.ts';
import { stringifyWithRaw } from '../schemas/raw-json.ts';
import { USAGES } from './usage.ts';

/** Flags shared by the read commands: `--name value` pairs and positional arguments. */
export function parseArgs(argv: string[]): { flags: Record<string, string>; positional: string[] } {
  const flags: Record<string, string> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a.startsWith('--')) {
      const [k, v] = a.slice(2).split('=', 2) as [string, string | undefined];
      if (v !== undefined) flags[k] = v;
      else if (argv[i + 1] !== undefined && !(argv[i + 1] as string).startsWith('--')) flags[k] = argv[++i] as string;
      else flags[k] = 'true';
    } else positional.push(a);
  }
  return { flags, positional };
}

/** The read queries of the CLI: over HTTP when a server URL is given, else on ClickHouse. */
export async function openReadQueries(flags: Record<string, string>): Promise<{ queries: ReadQueries; close: () => Promise<void> }> {
  const config = configOrExit();
  const url = flags.url ?? config.client.url;
  if (url) return { queries: createHttpReadQueries({ url, apiKey: config.client.apiKey }), close: async () => undefined };
  let rt;
  try {
    rt = await startRuntime('tool-audit-cli');
  } catch (err) {
    const hint = config.clickhouse.url ? '' : ` (is \`tool-audit serve\` running on ${config.clickhouse.dataDir}? then pass --url http://127.0.0.1:${config.port} or set TOOL_AUDIT_URL)`;
    throw new AppError('CLICKHOUSE_UNAVAILABLE', `${(err as Error).message}${hint}`, { retryable: false, cause: err });
  }
  const q = config.queries;
  const queries = createReadQueries(rt.clickhouse, config.clickhouse.database, {
    limits: { maxExecutionSeconds: q.maxExecutionSeconds, maxResultRows: q.maxResultRows },
    expensiveThresholdUsd: q.expensiveThresholdUsd,
  });
  return { queries, close: () => rt.clickhouse.close() };
}

/** Milliseconds as `320 ms`, `1.2 s` or `2m 03s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}

/** USD with 4 decimals, or `-` when unknown. */
export const formatUsd = (usd: number | null) => (usd === null ? '-' : `$${usd.toFixed(4)}`);

const MAX_INDENT = 16;

/** Renders a task view as an ordered tree, one line per call. Pure. */
export function renderTaskTree(view: Pick<TaskView, 'task_id' | 'invocations' | 'dependencies' | 'outputs'>): string {
  const calls = view.invocations;
  const order = new Map(calls.map((c, i) => [c.call_id, i]));
  const parent = new Map<string, { id: string; flow: string | null }>();
  for (const d of view.dependencies) {
    const from = order.get(d.preceding_call_id);
    const to = order.get(d.succeeding_call_id);
    if (from === undefined || to === undefined || from >= to) continue;
    // Several predecessors: hang the call under the latest one, the step it most directly follows.
    const current = parent.get(d.succeeding_call_id);
    if (!current || (order.get(current.id) as number) < from) parent.set(d.succeeding_call_id, { id: d.preceding_call_id, flow: d.data_flow });
  }
  const children = new Map<string, string[]>();
  for (const c of calls) {
    const p = parent.get(c.call_id)?.id ?? '';
    children.set(p, [...(children.get(p) ?? []), c.call_id]);
  }
  const outputs = new Map(view.outputs.map((o) => [o.call_id, o]));
  const byId = new Map(calls.map((c) => [c.call_id, c]));
  const lines: Array<[string, string]> = [];
  const walk = (id: string, prefix: string, last: boolean, depth: number) => {
    const c = byId.get(id);
    if (!c) return;
    const branch = depth === 0 ? '' : last ? '└─ ' : '├─ ';
    const out = outputs.get(id);
    const flow = parent.get(id)?.flow;
    const left = `${prefix}${branch}${c.created_at.slice(11, 23)} ${c.tool_id}`;
    const right = [
      c.status === 'success' ? 'ok' : c.status,
      formatDuration(c.duration_ms).padStart(8),
      formatUsd(c.cost_usd).padStart(10),
      out ? ` → ${out.content_type} ${out.size_bytes} B` : '',
      c.error ? ` ! ${c.error.slice(0, 60)}` : '',
      flow ? ` (${flow})` : '',
      depth > MAX_INDENT ? ` [depth ${depth}]` : '',
    ].join(' ');
    lines.push([left, right]);
    const kids = children.get(id) ?? [];
    const next = depth === 0 ? '' : depth > MAX_INDENT ? prefix : prefix + (last ? '   ' : '│  ');
    kids.forEach((k, i) => walk(k, next, i === kids.length - 1, depth + 1));
  };
  const roots = children.get('') ?? [];
  roots.forEach((r) => walk(r, '', true, 0));
  const width = Math.min(90, Math.max(0, ...lines.map(([l]) => l.length)));
  const failed = calls.filter((c) => c.status !== 'success').length;
  const cost = calls.reduce((s, c) => s + (c.cost_usd ?? 0), 0);
  const span = calls.length ? Date.parse((calls[calls.length - 1] as (typeof calls)[number]).created_at) - Date.parse((calls[0] as (typeof calls)[number]).created_at) : 0;
  const head = `task ${view.task_id}: ${calls.length} calls, ${failed} failed, ${view.dependencies.length} dependencies, span ${formatDuration(span)}, tool time ${formatDuration(calls.reduce((s, c) => s + c.duration_ms, 0))}, cost ${formatUsd(cost)}`;
  return [head, ...lines.map(([l, r]) => `${l.padEnd(width)}  ${r}`.trimEnd())].join('\n');
}

/** What `task --json` prints: the view with args, result_summary and tokens_used as stored. */
export function taskJson(view: TaskView): string {
  return stringifyWithRaw(view, 2);
}

/** `tool-audit task <task_id> [--url URL] [--json]`. */
export async function task(argv: string[]): Promise<void> {
  const { flags, positional } = parseArgs(argv);
  const taskId = positional[0];
  if (!taskId) {
    process.stderr.write(`${USAGES.task}\n`);
    process.exit(2);
  }
  const { queries, close } = await openReadQueries(flags);
  try {
    // The whole task: follow the pages (1000 calls each), up to 20 000 calls.
    const view: TaskView = await queries.task({ taskId, window: { fromMs: 0, toMs: MAX_TIME_MS }, limit: 1000 });
    for (let i = 0, cursor = view.next_cursor; cursor && i < 19; i++) {
      const next = await queries.task({ taskId, window: { fromMs: 0, toMs: MAX_TIME_MS }, limit: 1000, cursor });
      view.invocations.push(...next.invocations);
      view.dependencies.push(...next.dependencies);
      view.outputs.push(...next.outputs);
      cursor = next.next_cursor;
    }
    // A dependency between calls of two pages came with both pages.
    view.dependencies = [...new Map(view.dependencies.map((d) => [`${d.preceding_call_id}>${d.succeeding_call_id}`, d])).values()];
    if (view.invocations.length === 0) {
      process.stderr.write(`tool-audit: no calls recorded for task ${JSON.stringify(taskId)}\n`);
      process.exitCode = 1;
      return;
    }
    process.stdout.write(`${flags.json ? taskJson(view) : renderTaskTree(view)}\n`);
  } finally {
    await close();
  }
}
