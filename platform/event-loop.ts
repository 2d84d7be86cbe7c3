/**
 * How long the process's event loop was held up: every request, Kafka heartbeat and statement
 * result waits for it, so a job's JavaScript work (not niced like its ClickHouse threads) shows
 * here before anywhere else. Each second's longest delay is one observation of
 * `tool_audit_event_loop_delay_seconds` (a summary: p50/p95/p99 of the per-second maxima).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { MetricsRegistry } from './metrics.ts';

/** Watches for the rest of the process (its timer does not keep the process alive). */
export function watchEventLoop(metrics: MetricsRegistry, everyMs = 1000): void {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  setInterval(() => {
    // max is in nanoseconds; 0 until the first sample.
    if (h.count > 0) metrics.observe('tool_audit_event_loop_delay_seconds', 'Longest event loop delay of each second (a long synchronous task holds every request up)', h.max / 1e9);
    h.reset();
  }, everyMs).unref();
}
