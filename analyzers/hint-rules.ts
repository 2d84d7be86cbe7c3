/**
 * The optimization-hint rules, pure: figures measured over a window (by the queries
 * the hints job is given) in, OptimizationHints out. A hint's id is derived from its kind and
 * its subject (the tool, or the sequence of tools), never from its window: a finding keeps its id
 * from window to window. Windows are aligned to the job's interval, so every run over the same
 * period measures the same window: storing a window only once per hint makes re-runs add nothing.
 */
import { sha256Hex } from '../schemas/hashing.ts';
import type { HintKind, OptimizationHint } from '../schemas/optimization-hint.ts';

/** The thresholds of the three rules (platform/config.ts: HINTS_*). */
export interface HintThresholds {
  /** cache_candidate: the simulated cache saves at least this share (0–1) of the tool's time or cost. */
  cacheMinShare: number;
  /** bundle_candidate: the sequence occurs at least this many times. */
  bundleMinCount: number;
  /** bundle_candidate: at most this long between one step's end and the next step's start, ms. */
  bundleMaxGapMs: number;
  /** retry_storm: more than this many failed calls of the tool retried within one task. */
  retryThreshold: number;
}

/** An analysis window [fromMs, toMs). */
export interface HintWindow {
  fromMs: number;
  toMs: number;
}

/** A tool's simulated cache at its suggested TTL, and what the tool cost in the window. */
export interface CacheStat {
  tool_id: string;
  calls: number;
  total_ms: number;
  total_usd: number;
  ttl_ms: number;
  hits: number;
  saved_ms: number;
  saved_usd: number;
  tasks: string[];
}

/** A sequence of tools linked by data flow, each step within the gap, and how often it ran. */
export interface BundleStat {
  tools: string[];
  runs: number;
  /** Median gap between one step's end and the next's start, ms. */
  median_gap_ms: number;
  /** Median over runs of the gaps of a run together: what one bundled call saves per run. */
  saved_ms_per_run: number;
  /** Sum over runs of the gaps of a run. */
  saved_ms_total: number;
  tasks: string[];
}

/** One task where a tool's failed calls were retried more than the threshold. */
export interface RetryStat {
  task_id: string;
  tool_id: string;
  /** Failed calls followed by another call of the tool in the task. */
  retried: number;
  /** The error (or, without one, the status) of each retried failed call. */
  errors: string[];
  /** Duration and cost of those retried failed calls. */
  wasted_ms: number;
  wasted_usd: number;
}

/** What the hints job measured over one window. */
export interface HintMeasures {
  cache: CacheStat[];
  bundles: BundleStat[];
  retries: RetryStat[];
}

/** At most this many task ids per hint. */
export const HINT_TASK_SAMPLE = 10;

/**
 * The window a run at `nowMs` covers: the `windowMs` ending at the last multiple of `intervalMs`
 * (epoch-aligned). Every run within one interval gets the same window, hence the same hint ids.
 */
export function alignedWindow(nowMs: number, intervalMs: number, windowMs: number): HintWindow {
  const toMs = Math.floor(nowMs / intervalMs) * intervalMs;
  return { fromMs: toMs - windowMs, toMs };
}

/**
 * The hint id of a finding, (kind, subject): a UUID-shaped prefix of their SHA-256 (version nibble
 * 8, RFC 9562 "custom"). Not of the window: the same finding measured again in a later, overlapping
 * window is the same hint with newer evidence (a row of its own, read as the newest), not a new one.
 */
export function hintId(kind: HintKind, toolIds: readonly string[]): string {
  const h = sha256Hex(JSON.stringify([kind, toolIds]));
  const variant = ((parseInt(h[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));

/** Builds a hint of the window. */
function hint(kind: HintKind, toolIds: string[], tasks: readonly string[], evidence: Record<string, unknown>, savedMs: number, savedUsd: number, w: HintWindow, createdAtMs: number): OptimizationHint {
  return {
    hint_id: hintId(kind, toolIds),
    kind,
    tool_ids: toolIds,
    task_ids_sample: [...tasks].sort().slice(0, HINT_TASK_SAMPLE),
    evidence,
    estimated_savings_ms: Math.max(0, Math.round(savedMs)),
    estimated_savings_usd: Math.max(0, round(savedUsd, 6)),
    window_from: new Date(w.fromMs).toISOString(),
    window_to: new Date(w.toMs).toISOString(),
    created_at: new Date(createdAtMs).toISOString(),
  };
}

/** cache_candidate: a cacheable tool whose cache at the suggested TTL saves ≥ cacheMinShare of its time or cost. */
export function cacheHints(stats: readonly CacheStat[], t: HintThresholds, w: HintWindow, nowMs: number): OptimizationHint[] {
  const out: OptimizationHint[] = [];
  for (const s of stats) {
    const shareMs = s.total_ms > 0 ? s.saved_ms / s.total_ms : 0;
    const shareUsd = s.total_usd > 0 ? s.saved_usd / s.total_usd : 0;
    if (s.hits === 0 || (shareMs < t.cacheMinShare && shareUsd < t.cacheMinShare)) continue;
    const evidence = { ttl_ms: s.ttl_ms, calls: s.calls, hits: s.hits, saved_ms: s.saved_ms, saved_usd: round(s.saved_usd, 6), share_ms: round(shareMs, 4), share_usd: round(shareUsd, 4) };
    out.push(hint('cache_candidate', [s.tool_id], s.tasks, evidence, s.saved_ms, s.saved_usd, w, nowMs));
  }
  return out;
}

/**
 * bundle_candidate: a data-flow sequence of ≥ 2 tools that ran at least bundleMinCount times. A
 * sequence is left out when a longer reported sequence contains it and ran as often (the longer
 * one is the hint).
 */
export function bundleHints(stats: readonly BundleStat[], t: HintThresholds, w: HintWindow, nowMs: number): OptimizationHint[] {
  const kept = stats.filter((s) => s.tools.length >= 2 && s.runs >= t.bundleMinCount);
  const contains = (long: string[], short: string[]) => long.length > short.length && long.join('\u0000').includes(short.join('\u0000'));
  return kept
    .filter((s) => !kept.some((o) => contains(o.tools, s.tools) && o.runs >= s.runs))
    .map((s) =>
      hint(
        'bundle_candidate',
        s.tools,
        s.tasks,
        { count: s.runs, median_gap_ms: s.median_gap_ms, saved_ms_per_run: s.saved_ms_per_run, max_gap_ms: t.bundleMaxGapMs },
        s.saved_ms_total,
        0,
        w,
        nowMs,
      ),
    );
}

/** retry_storm: a tool whose failed calls were retried more than retryThreshold times within a task (one hint per tool). */
export function retryHints(stats: readonly RetryStat[], t: HintThresholds, w: HintWindow, nowMs: number): OptimizationHint[] {
  const byTool = new Map<string, RetryStat[]>();
  for (const s of stats) {
    if (s.retried <= t.retryThreshold) continue;
    byTool.set(s.tool_id, [...(byTool.get(s.tool_id) ?? []), s]);
  }
  return [...byTool].map(([tool, storms]) => {
    const errors: Record<string, number> = {};
    for (const s of storms) for (const e of s.errors) errors[e] = (errors[e] ?? 0) + 1;
    const sum = (f: (s: RetryStat) => number) => storms.reduce((n, s) => n + f(s), 0);
    const evidence = { tasks: storms.length, retried_failures: sum((s) => s.retried), max_in_task: Math.max(...storms.map((s) => s.retried)), threshold: t.retryThreshold, errors };
    return hint('retry_storm', [tool], storms.map((s) => s.task_id), evidence, sum((s) => s.wasted_ms), sum((s) => s.wasted_usd), w, nowMs);
  });
}

/** Every hint of a window, cache candidates first. */
export function hintsOf(m: HintMeasures, t: HintThresholds, w: HintWindow, nowMs: number): OptimizationHint[] {
  return [...cacheHints(m.cache, t, w, nowMs), ...bundleHints(m.bundles, t, w, nowMs), ...retryHints(m.retries, t, w, nowMs)];
}
