/**
 * The one scheduler of the background jobs (dependency analyzer, auditor, dedup indexer): each
 * runs every interval, never two runs of one job at once, a failed run logged and retried at the
 * next tick. `runOnce()` stays callable on its own (tests, CLI).
 */
import { errorMessage } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';

/** A periodic job. */
export interface PeriodicJob<R> {
  /** One run, now. */
  runOnce(): Promise<R>;
  /** Runs now, then every intervalMs after each run ends. */
  start(intervalMs: number): void;
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
  let failing = false;
  return {
    runOnce,
    start(intervalMs) {
      const tick = () => {
        const started = performance.now();
        running = runOnce()
          .then((r) => {
            if (failing) logger.info(`${name} works again`);
            failing = false;
            after?.(r, performance.now() - started);
          })
          .catch((err: unknown) => {
            // Once per failure streak: a job that keeps failing (ClickHouse down) would flood the log.
            if (!failing) logger.warn({ err: errorMessage(err) }, `${name} cycle failed; retrying`);
            failing = true;
          })
          .finally(() => {
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
