/**
 * What a process still does after it listens: `serve` and `ingest` answer /healthz
 * at once and load what grows with history (the key filter, budget spend, Kafka) afterwards;
 * /readyz tells which of those steps are still under way. A step that fails ends the process
 * with a non-zero status: a process that cannot do its work must not look alive.
 */
import { errorMessage } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';

/** One step's state as /readyz shows it. */
export interface StepCheck {
  ok: boolean;
  detail?: string;
}

/** The steps of a start. */
export interface StartupSteps {
  /** Runs `work` as the step `name`; `describe` tells /readyz how it goes while it runs. */
  run(name: string, work: () => Promise<void>, describe?: () => string): Promise<void>;
  /** Whether the step ran to its end. */
  done(name: string): boolean;
  /** Every step's check. */
  checks(): Record<string, StepCheck>;
}

/** Creates the steps of a start; a failed step calls `fail` (default: exit with status 1). */
export function startupSteps(logger: Logger, fail: (code: number) => void = (code) => process.exit(code)): StartupSteps {
  const steps = new Map<string, { done: boolean; started: number; describe?: () => string }>();
  return {
    async run(name, work, describe) {
      const step = { done: false, started: performance.now(), ...(describe ? { describe } : {}) };
      steps.set(name, step);
      try {
        await work();
        step.done = true;
        logger.info({ step: name, ms: Math.round(performance.now() - step.started) }, 'start-up step done');
      } catch (err) {
        logger.fatal({ step: name, err: errorMessage(err) }, 'start-up step failed; exiting');
        fail(1);
      }
    },
    done: (name) => steps.get(name)?.done === true,
    checks() {
      const out: Record<string, StepCheck> = {};
      for (const [name, s] of steps) {
        const secs = Math.round((performance.now() - s.started) / 1000);
        out[name] = s.done ? { ok: true } : { ok: false, detail: `loading for ${secs} s${s.describe ? `: ${s.describe()}` : ''}` };
      }
      return out;
    },
  };
}
