/**
 * `tool-audit hints [--kind K] [--from ISO] [--to ISO] [--limit N] [--json]`: the optimization
 * hints stored, newest first (docs/manifests-budgets-hints.md: Optimization hints). Reads ClickHouse directly or a running
 * server (--url / TOOL_AUDIT_URL). Also wires the hints job of `serve` and `analyze`.
 */
import type { JobsOptions } from '../analyzers/jobs.ts';
import { listQuery, windowOf } from '../api/read-params.ts';
import type { Config } from '../platform/config.ts';
import { measureHints } from '../queries/hint-candidates.ts';
import type { HintsList } from '../schemas/answers.ts';
import type { QueryContext } from '../queries/sql.ts';
import { HINT_KINDS, type HintKind } from '../schemas/optimization-hint.ts';
import { table } from './cache.ts';
import { configOrExit } from './runtime.ts';
import { formatDuration, openReadQueries, parseArgs } from './task.ts';
import { USAGES } from './usage.ts';

/** The hints job of a process (undefined when HINTS_INTERVAL_MS is 0): its config and measuring queries. */
export function hintsJobOptions(config: Config): JobsOptions['hints'] {
  const h = config.hints;
  if (h.intervalMs <= 0) return undefined;
  const ctx: QueryContext = { limits: { maxExecutionSeconds: config.queries.maxExecutionSeconds, maxResultRows: config.queries.maxResultRows }, expensiveThresholdUsd: config.queries.expensiveThresholdUsd };
  // Measured on the job's door (startJobs: the job lane, stopped with the jobs).
  return { ...h, thresholds: h, measure: (ch, w) => measureHints(ch, ch.database, w, h, ctx) };
}

/** One line of evidence per kind, the figures a reader looks at first. Pure. */
function evidenceLine(h: HintsList['hints'][number]): string {
  const e = h.evidence as Record<string, unknown>;
  // A producer's evidence may have other fields than the analyzer's: shown as it is.
  const expected = { cache_candidate: ['ttl_ms', 'hits', 'calls'], bundle_candidate: ['count', 'median_gap_ms'], retry_storm: ['tasks', 'retried_failures'] }[h.kind];
  if (!expected.every((k) => k in e)) return JSON.stringify(e).slice(0, 120);
  if (h.kind === 'cache_candidate') return `ttl ${String(e.ttl_ms)} ms, ${String(e.hits)}/${String(e.calls)} hits`;
  if (h.kind === 'bundle_candidate') return `${String(e.count)} runs, median gap ${String(e.median_gap_ms)} ms`;
  const errors = Object.entries((e.errors ?? {}) as Record<string, number>).map(([k, n]) => `${k}×${n}`);
  return `${String(e.tasks)} tasks, ${String(e.retried_failures)} retried failures: ${errors.join(', ')}`;
}

/** Renders hints as a table, newest first. Pure. */
export function renderHints(list: HintsList): string {
  if (list.hints.length === 0) return 'no optimization hints in the window';
  const rows = list.hints.map((h) => [h.created_at.slice(0, 19).replace('T', ' '), h.kind, h.tool_ids.join(' → '), formatDuration(h.estimated_savings_ms), `$${h.estimated_savings_usd.toFixed(4)}`, evidenceLine(h)]);
  const out = table(['created', 'kind', 'tools', 'saves', 'saves $', 'evidence'], rows);
  if (list.next_cursor) out.push(`… more: --cursor ${list.next_cursor}`);
  return out.join('\n');
}

/** `tool-audit hints`. */
export async function hints(argv: string[]): Promise<void> {
  const { flags } = parseArgs(argv);
  const config = configOrExit();
  const when = { from: listQuery.from.safeParse(flags.from), to: listQuery.to.safeParse(flags.to), limit: listQuery.limit.safeParse(flags.limit) };
  const kind = flags.kind as HintKind | undefined;
  if (!when.from.success || !when.to.success || !when.limit.success || (kind !== undefined && !HINT_KINDS.includes(kind))) {
    process.stderr.write(`${USAGES.hints}\n`);
    process.exit(2);
  }
  const window = windowOf({ from: when.from.data, to: when.to.data }, { windowDays: config.queries.defaultWindowDays, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 });
  const { queries, close } = await openReadQueries(flags);
  try {
    const list = await queries.hints({ window, limit: when.limit.data ?? 100, ...(kind ? { kind } : {}), ...(flags.cursor ? { cursor: flags.cursor } : {}) });
    process.stdout.write(`${flags.json ? JSON.stringify(list, null, 2) : renderHints(list)}\n`);
  } finally {
    await close();
  }
}
