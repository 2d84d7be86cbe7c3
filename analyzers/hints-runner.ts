/**
 * The hints job: at start and every interval, measures the window ending at the last interval
 * boundary (hint-rules.ts alignedWindow), applies the rules and stores each hint unless its id
 * already has a row for this window or a later one. Ids derive from (kind, subject), so the same
 * finding in the next, overlapping window is the same hint with a newer row (readers take the
 * newest), and a re-run over the same window — another run in the same interval, a restart, a
 * second process — adds nothing.
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { chTime } from '../platform/clickhouse/statement.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { ANALYZER_FINGERPRINT } from '../ingest/ports.ts';
import type { OptimizationHint } from '../schemas/optimization-hint.ts';
import { alignedWindow, hintsOf, type HintMeasures, type HintThresholds, type HintWindow } from './hint-rules.ts';
import { periodic, type PeriodicJob } from './scheduler.ts';

/** Dependencies of {@link createHintsJob}. */
export interface HintsJobDeps {
  clickhouse: ClickHouseDoor;
  /**
   * What the rules need over a window (queries/hint-candidates.ts measureHints, wired by the CLI),
   * measured through the job's own door: its lane and stop signal.
   */
  measure: (ch: ClickHouseDoor, w: HintWindow) => Promise<HintMeasures>;
  thresholds: HintThresholds;
  intervalMs: number;
  windowMs: number;
  metrics: MetricsRegistry;
  logger: Logger;
  /** The clock; tests pin it. */
  now?: () => number;
}

/** What one run did. */
export interface HintsRunResult {
  window: HintWindow;
  hints: number;
  inserted: number;
}

/** The workflow_optimizations row of an analyzer hint (JSONEachRow). */
function hintRow(h: OptimizationHint): Record<string, unknown> {
  return {
    ...h,
    evidence: JSON.stringify(h.evidence),
    window_from: chTime(Date.parse(h.window_from)),
    window_to: chTime(Date.parse(h.window_to)),
    created_at: chTime(Date.parse(h.created_at)),
    origin: 'analyzer',
    fingerprint: ANALYZER_FINGERPRINT,
    source: 'analyzer',
  };
}

const STORED_WINDOWS = `SELECT toString(hint_id) AS id, toUnixTimestamp64Milli(max(window_to)) AS to_ms
FROM {db:Identifier}.workflow_optimizations WHERE hint_id IN {ids:Array(UUID)} GROUP BY hint_id`;

/** The end of the newest window stored per hint id (epoch ms). */
async function storedWindows(ch: ClickHouseDoor, ids: string[]): Promise<Map<string, number>> {
  const rows = await ch.select<{ id: string; to_ms: string | number }>(STORED_WINDOWS, { ids });
  return new Map(rows.map((r) => [r.id, Number(r.to_ms)]));
}

/** Creates the hints job. */
export function createHintsJob(deps: HintsJobDeps): PeriodicJob<HintsRunResult> {
  const now = deps.now ?? Date.now;
  async function runOnce(): Promise<HintsRunResult> {
    const at = now();
    const window = alignedWindow(at, deps.intervalMs, deps.windowMs);
    const hints = hintsOf(await deps.measure(deps.clickhouse, window), deps.thresholds, window, at);
    const stored = hints.length ? await storedWindows(deps.clickhouse, hints.map((h) => h.hint_id)) : new Map<string, number>();
    const fresh = hints.filter((h) => (stored.get(h.hint_id) ?? -Infinity) < window.toMs);
    await deps.clickhouse.insertRows('workflow_optimizations', fresh.map((h) => ({ key: `hint/${h.hint_id}/${window.toMs}`, row: hintRow(h) })));
    for (const h of fresh) deps.metrics.inc('tool_audit_hints_total', 'Optimization hints written by the hints job', { kind: h.kind });
    return { window, hints: hints.length, inserted: fresh.length };
  }
  return periodic('hints', runOnce, deps.logger, (r) => {
    if (r.inserted) deps.logger.info({ window_to: new Date(r.window.toMs).toISOString(), hints: r.hints, inserted: r.inserted }, 'optimization hints written');
  });
}
