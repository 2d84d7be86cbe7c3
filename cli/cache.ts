/**
 * `tool-audit cache [--tool T] [--ttl 5m] [--from ISO] [--to ISO]`: what a TTL cache keyed by
 * (tool_id, args_hash) would have served and saved per tool; with --tool, that tool's TTL curve
 * and suggested TTL too. Reads ClickHouse directly or a running server (--url / TOOL_AUDIT_URL).
 */
import { listQuery, windowOf } from '../api/read-params.ts';
import type { CacheSimulation, TtlCurve } from '../schemas/cache-answers.ts';
import { configOrExit } from './runtime.ts';
import { formatDuration, openReadQueries, parseArgs } from './task.ts';
import { USAGES } from './usage.ts';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `5m`, `90s`, `1h`, `7d`, `1500ms` or plain milliseconds → ms; undefined when malformed. Pure. */
export function parseTtl(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) return undefined;
  const ms = Math.round(Number(m[1]) * (UNITS[m[2] ?? 'ms'] as number));
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** A TTL as `5m`, `1h`, `7d` (the largest unit dividing it). Pure. */
export function formatTtl(ms: number | null): string {
  if (ms === null) return '-';
  for (const [u, f] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) if (ms > 0 && ms % f === 0) return `${ms / f}${u}`;
  return `${ms}ms`;
}

/** Rows as aligned columns: the first left-aligned, the others right-aligned. Pure. */
export function table(head: string[], rows: string[][]): string[] {
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => (r[i] as string).length)));
  return all.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  '));
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** Renders the simulation table (and a curve when given). Pure. */
export function renderCache(sim: CacheSimulation, curve?: TtlCurve): string {
  const rows = sim.tools.map((t) => [t.tool_id, formatTtl(t.ttl_ms), t.cacheable ? 'yes' : 'no', String(t.calls), String(t.hits), pct(t.hit_rate), formatDuration(t.saved_ms), `$${t.saved_usd.toFixed(2)}`]);
  const s = sim.totals;
  rows.push(['total', '', '', String(s.calls), String(s.hits), pct(s.hit_rate), formatDuration(s.saved_ms), `$${s.saved_usd.toFixed(2)}`]);
  const out = table(['tool', 'ttl', 'cacheable', 'calls', 'hits', 'hit rate', 'saved', 'saved $'], rows);
  if (curve) {
    out.push('', `TTL curve of ${curve.tool_id}${curve.cacheable ? '' : ' (not idempotent in the current manifest: no cache)'}`);
    out.push(...table(['ttl', 'hits', 'hit rate', 'saved', 'saved $'], curve.points.map((p) => [formatTtl(p.ttl_ms), String(p.hits), pct(p.hit_rate), formatDuration(p.saved_ms), `$${p.saved_usd.toFixed(2)}`])));
    out.push(`suggested TTL: ${curve.suggested_ttl_ms === null ? 'none (a cache saves nothing here)' : formatTtl(curve.suggested_ttl_ms)} (the shortest reaching 90 % of the 7-day savings)`);
  }
  return out.join('\n');
}

/** `tool-audit cache`. */
export async function cache(argv: string[]): Promise<void> {
  const { flags } = parseArgs(argv);
  const config = configOrExit();
  const ttlMs = flags.ttl === undefined ? undefined : parseTtl(flags.ttl);
  const when = { from: listQuery.from.safeParse(flags.from), to: listQuery.to.safeParse(flags.to) };
  if ((flags.ttl !== undefined && ttlMs === undefined) || !when.from.success || !when.to.success) {
    process.stderr.write(`${USAGES.cache}\n`);
    process.exit(2);
  }
  const window = windowOf({ from: when.from.data, to: when.to.data }, { windowDays: config.queries.defaultWindowDays, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 });
  const { queries, close } = await openReadQueries(flags);
  try {
    const sim = await queries.cacheSimulation({ window, ...(flags.tool ? { toolId: flags.tool } : {}), ...(ttlMs === undefined ? {} : { ttlMs }) });
    const curve = flags.tool ? await queries.ttlCurve({ toolId: flags.tool, window }) : undefined;
    process.stdout.write(`${flags.json ? JSON.stringify({ simulation: sim, ...(curve ? { ttl_curve: curve } : {}) }, null, 2) : renderCache(sim, curve)}\n`);
  } finally {
    await close();
  }
}
