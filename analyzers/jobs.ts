/**
 * The background jobs of a process, together: the dependency analyzer, the auditor, the dedup
 * indexer and the optimization-hints job, each a periodic job of the one scheduler (scheduler.ts). The CLI command that runs
 * them (`serve`, `analyze`) starts them and stops them on shutdown.
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import type { Config } from '../platform/config.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { createAuditor } from './auditor.ts';
import { createDedupIndexer } from './dedup-index.ts';
import { createDependencyAnalyzer } from './dependency-runner.ts';
import { createHintsJob, type HintsJobDeps } from './hints-runner.ts';
import type { PeriodicJob } from './scheduler.ts';

/** Which jobs to run, and how often. */
export interface JobsOptions {
  /** Analyzer and auditor settings; absent: neither runs. */
  analysis?: Config['analysis'];
  /** Interval of the dedup indexer; 0 or absent: it does not run. */
  dedupIndexIntervalMs?: number;
  /** The optimization-hints job (its window, thresholds and measuring queries); absent: it does not run. */
  hints?: Pick<HintsJobDeps, 'measure' | 'thresholds' | 'intervalMs' | 'windowMs'>;
}

/** Started jobs. */
export interface RunningJobs {
  /** Stops every job and waits for runs in progress. */
  stop(): Promise<void>;
}

/** Starts the chosen jobs on a ClickHouse door. */
export function startJobs(deps: { clickhouse: ClickHouseDoor; metrics: MetricsRegistry; logger: Logger }, opts: JobsOptions): RunningJobs {
  const jobs: Array<{ job: PeriodicJob<unknown>; intervalMs: number }> = [];
  const a = opts.analysis;
  if (a) {
    const common = { ...deps, windowMs: a.dependencyWindowMs };
    jobs.push({ job: createDependencyAnalyzer({ ...common, overlapMs: a.overlapMs }), intervalMs: a.analyzerIntervalMs });
    jobs.push({ job: createAuditor({ ...common, graceMs: a.auditGraceMs }), intervalMs: a.auditIntervalMs });
  }
  if (opts.hints) jobs.push({ job: createHintsJob({ ...deps, ...opts.hints }), intervalMs: opts.hints.intervalMs });
  if (opts.dedupIndexIntervalMs && opts.dedupIndexIntervalMs > 0) jobs.push({ job: createDedupIndexer(deps), intervalMs: opts.dedupIndexIntervalMs });
  for (const { job, intervalMs } of jobs) job.start(intervalMs);
  return { stop: async () => void (await Promise.all(jobs.map(({ job }) => job.stop()))) };
}
