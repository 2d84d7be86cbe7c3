/**
 * `tool-audit top`: one line per tool — calls, success rate, average and p95 duration, total
 * cost — busiest first, over a window (default: the configured default window). Reads
 * ClickHouse directly or a running server (--url / TOOL_AUDIT_URL), like `tool-audit task`.
 */
import { plainListQuery, windowOf } from '../api/read-params.ts';
import type { ToolsSummary } from '../schemas/answers.ts';
import { configOrExit } from './runtime.ts';
import { formatDuration, openReadQueries, parseArgs } from './task.ts';

/** Renders the per-tool table. Pure. */
export function renderTop(summary: ToolsSummary, window: { fromMs: number; toMs: number }): string {
  const rows = summary.tools.map((t) => [
    t.tool_id,
    String(t.invocations),
    `${(t.success_rate * 100).toFixed(1)}%`,
    formatDuration(t.avg_duration_ms),
    formatDuration(t.p95_duration_ms),
    `$${t.total_cost_usd.toFixed(2)}`,
  ]);
  const calls = summary.tools.reduce((s, t) => s + t.invocations, 0);
  const ok = summary.tools.reduce((s, t) => s + t.success_rate * t.invocations, 0);
  const cost = summary.tools.reduce((s, t) => s + t.total_cost_usd, 0);
  const head = ['tool', 'calls', 'success', 'avg', 'p95', 'cost'];
  const total = ['total', String(calls), calls ? `${((ok / calls) * 100).toFixed(1)}%` : '-', '', '', `$${cost.toFixed(2)}`];
  const table = [head, ...rows, total];
  const widths = head.map((_, i) => Math.max(...table.map((r) => (r[i] as string).length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  const to = window.toMs >= Date.UTC(2200, 0, 1) ? 'now' : new Date(window.toMs).toISOString();
  return [`tools from ${new Date(window.fromMs).toISOString()} to ${to}`, line(head), ...rows.map(line), line(total)].join('\n');
}

/** `tool-audit top [--from ISO] [--to ISO] [--limit N] [--url URL] [--json]`. */
export async function top(argv: string[]): Promise<void> {
  const { flags } = parseArgs(argv);
  const config = configOrExit();
  const parsed = plainListQuery.safeParse(Object.fromEntries(Object.entries(flags).filter(([k]) => ['from', 'to', 'limit'].includes(k))));
  if (!parsed.success) {
    process.stderr.write(`tool-audit top: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}\n`);
    process.exit(2);
  }
  const window = windowOf(parsed.data, {
    windowDays: config.queries.defaultWindowDays,
    expensiveThresholdUsd: config.queries.expensiveThresholdUsd,
    slowThresholdMs: config.queries.slowThresholdMs,
  });
  const { queries, close } = await openReadQueries(flags);
  try {
    const summary = await queries.tools({ window, limit: parsed.data.limit ?? 100 });
    process.stdout.write(`${flags.json ? JSON.stringify(summary, null, 2) : renderTop(summary, window)}\n`);
  } finally {
    await close();
  }
}
