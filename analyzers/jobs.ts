/**
 * The background jobs of a process, together: the dependency analyzer, the auditor, the dedup
 * indexer and the optimization-hints job, each a periodic job of the one scheduler (scheduler.ts). The CLI command that runs
 * them (`serve`, `analyze`) starts them and stops them on shutdown.
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import type { Config } from '../platform/config.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { createAuditLogBuilder, type AuditLogBuilder, type AuditLogBuilderDeps } from './audit-log/builder.ts';
import { createAuditor } from './auditor.ts';
import { createDedupIndexer } from './dedup-index.ts';
import { createDependencyAnalyzer } from './dependency-runner.ts';
import { createHintsJob, type HintsJobDeps } from './hints-runner.ts';
import type { JobHealth, PeriodicJob } from './scheduler.ts';

/** Which jobs to run, and how often. */
export interface JobsOptions {
  /** Analyzer and auditor settings; absent: neither runs. */
  analysis?: Config['analysis'];
  /** Interval of the dedup indexer; 0 or absent: it does not run. */
  dedupIndexIntervalMs?: number;
  /** The audit log builder (its signing key and timing); absent: it does not run. */
  auditLog?: Omit<AuditLogBuilderDeps, 'clickhouse' | 'logger' | 'metrics'>;
  /** The optimization-hints job (its window, thresholds and measuring queries); absent: it does not run. */
  hints?: Pick<HintsJobDeps, 'measure' | 'thresholds' | 'intervalMs' | 'windowMs'>;
}

/** A job failing this many runs in a row is reported as failing by /readyz (which stays ready: the API does not depend on it). */
export const JOB_FAILING_AFTER = 3;

/** Started jobs. */
export interface RunningJobs {
  /** How each job is doing. */
  health(): JobHealth[];
  /**
   * What makes the process unready although the API works: the audit log builder refusing to
   * sign a rewritten history (an operator must act; docs/operations.md).
   */
  checks(): Record<string, { ok: boolean; detail?: string }>;
  /** Stops every job and waits for runs in progress. */
  stop(): Promise<void>;
}

/** Starts the chosen jobs on a ClickHouse door. */
export function startJobs(door: { clickhouse: ClickHouseDoor; metrics: MetricsRegistry; logger: Logger }, opts: JobsOptions): RunningJobs {
  // Every statement of a job goes after reads and ingest (platform/clickhouse/gate.ts); on stop,
  // a job's next statement fails, so a run working through a long backlog ends within one statement.
  const stopping = new AbortController();
  const deps = { ...door, clickhouse: door.clickhouse.lane('job', stopping.signal) };
  const jobs: Array<{ job: PeriodicJob<unknown>; intervalMs: number }> = [];
  const a = opts.analysis;
  if (a) {
    const common = { ...deps, windowMs: a.dependencyWindowMs };
    jobs.push({ job: createDependencyAnalyzer({ ...common, overlapMs: a.overlapMs }), intervalMs: a.analyzerIntervalMs });
    jobs.push({ job: createAuditor({ ...common, graceMs: a.auditGraceMs }), intervalMs: a.auditIntervalMs });
  }
  if (opts.hints) jobs.push({ job: createHintsJob({ ...deps, ...opts.hints }), intervalMs: opts.hints.intervalMs });
  // Every few seconds: a head is signed only every headIntervalMs, the leaves are appended sooner.
  let builder: AuditLogBuilder | undefined;
  if (opts.auditLog) {
    builder = createAuditLogBuilder({ ...deps, ...opts.auditLog });
    jobs.push({ job: builder, intervalMs: Math.min(5_000, opts.auditLog.headIntervalMs) });
  }
  if (opts.dedupIndexIntervalMs && opts.dedupIndexIntervalMs > 0) jobs.push({ job: createDedupIndexer(deps), intervalMs: opts.dedupIndexIntervalMs });
  const observe = (h: JobHealth): void => {
    deps.metrics.set('tool_audit_job_consecutive_failures', 'Failed runs in a row of a background job (0 when its last run worked)', h.failures, { job: h.name });
    if (h.failures > 0) deps.metrics.inc('tool_audit_job_failures_total', 'Failed runs of a background job', { job: h.name });
    else deps.metrics.set('tool_audit_job_last_success_seconds', 'When a background job last ran to the end (epoch seconds)', (h.lastOkAt ?? 0) / 1000, { job: h.name });
  };
  for (const { job, intervalMs } of jobs) job.start(intervalMs, observe);
  return {
    health: () => jobs.map(({ job }) => job.health()),
    checks(): Record<string, { ok: boolean; detail?: string }> {
      const refused = builder?.refusal();
      if (!builder) return {};
      return { audit_log: refused ? { ok: false, detail: `no head signed since ${new Date(refused.sinceMs).toISOString()}: ${refused.reason}` } : { ok: true } };
    },
    async stop() {
      stopping.abort();
      await Promise.all(jobs.map(({ job }) => job.stop()));
    },
  };
}
