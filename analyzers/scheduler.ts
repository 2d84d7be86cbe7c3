/**
 * The one scheduler of the background jobs (dependency analyzer, auditor, dedup indexer): each
 * runs every interval, never two runs of one job at once, a failed run logged and retried at the
 * next tick. `runOnce()` stays callable on its own (tests, CLI).
 */
import { errorMessage } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';

/** How a scheduled job is doing: what /readyz and the metrics say of it. */
export interface JobHealth {
  name: string;
  /** Failed runs in a row (0 after a run that worked). */
  failures: number;
  /** The last failure's message, while the streak lasts. */
  lastError?: string;
  /** When the last run that worked ended (epoch ms); absent before the first. */
  lastOkAt?: number;
}

/** A periodic job. */
export interface PeriodicJob<R> {
  /** One run, now. */
  runOnce(): Promise<R>;
  /** Runs now, then every intervalMs after each run ends; `observe` hears of every run's outcome. */
  start(intervalMs: number, observe?: (health: JobHealth) => void): void;
  /** How the scheduled runs are doing. */
  health(): JobHealth;
  /** Stops the schedule and waits for a run in progress. */
  stop(): Promise<void>;
}

/** What a job reports after a run: log or metrics; failures are logged by the scheduler. */
export type AfterRun<R> = (result: R, ms: number) => void;

/** Makes `runOnce` a periodic job named `name`. */
export function periodic<R>(name: string, runOnce: () => Promise<R>, logger: Logger, after?: AfterRun<R>): PeriodicJob<R> {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const health: JobHealth = { name, failures: 0 };
  return {
    runOnce,
    health: () => ({ ...health }),
    start(intervalMs, observe) {
      const tick = () => {
        const started = performance.now();
        running = runOnce()
          .then((r) => {
            if (health.failures > 0) logger.info({ after: health.failures }, `${name} works again`);
            health.failures = 0;
            delete health.lastError;
            health.lastOkAt = Date.now();
            after?.(r, performance.now() - started);
          })
          .catch((err: unknown) => {
            if (stopped) return; // a run cut short by stop() did not fail
            // Logged at the first failure and then at growing intervals (1, 10, 100… in a row):
            // a job that keeps failing on a slice says so without flooding the log.
            health.failures++;
            health.lastError = errorMessage(err);
            if (Number.isInteger(Math.log10(health.failures))) logger.warn({ err: health.lastError, failures: health.failures }, `${name} cycle failed; retrying`);
          })
          .finally(() => {
            observe?.({ ...health });
            if (!stopped) {
              timer = setTimeout(tick, intervalMs);
              timer.unref();
            }
          });
      };
      tick();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
