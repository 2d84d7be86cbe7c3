/**
 * `tool-audit analyze`: the dependency analyzer and the auditor, as their own process (also
 * run inside `serve` unless ANALYZER_ENABLED=false). Run one per ClickHouse database.
 */
import { createAuditor } from '../analyzers/auditor.ts';
import { createDependencyAnalyzer, type PeriodicJob } from '../analyzers/dependency-runner.ts';
import { buildApp } from '../api/app.ts';
import { pingClickHouse } from '../platform/clickhouse/health.ts';
import { MetricsRegistry } from '../platform/metrics.ts';
import { onShutdown, startRuntime, type Runtime } from './runtime.ts';

/** Starts the analyzer and auditor jobs of a runtime. */
export function startAnalysis(rt: Runtime, metrics: MetricsRegistry): PeriodicJob<unknown>[] {
  const a = rt.config.analysis;
  const common = { clickhouse: rt.clickhouse, database: rt.config.clickhouse.database, windowMs: a.dependencyWindowMs, metrics, logger: rt.logger };
  const analyzer = createDependencyAnalyzer({ ...common, overlapMs: a.overlapMs });
  const auditor = createAuditor({ ...common, graceMs: a.auditGraceMs });
  analyzer.start(a.analyzerIntervalMs);
  auditor.start(a.auditIntervalMs);
  return [analyzer, auditor];
}

/** Runs until SIGTERM; /healthz, /readyz and /metrics on PORT. */
export async function analyze(): Promise<void> {
  const rt = await startRuntime('tool-audit-analyze');
  const metrics = new MetricsRegistry();
  const jobs = startAnalysis(rt, metrics);
  const app = buildApp({
    readiness: async () => {
      const clickhouse = await pingClickHouse(rt.clickhouse);
      return { ready: clickhouse.ok, checks: { clickhouse } };
    },
    metrics,
    apiKeys: rt.config.apiKeys,
    maxBodyBytes: rt.config.ingest.maxBodyBytes,
    logger: rt.logger,
  });
  await app.listen({ port: rt.config.port, host: rt.config.host });
  rt.logger.info({ windowMs: rt.config.analysis.dependencyWindowMs, graceMs: rt.config.analysis.auditGraceMs }, 'tool-audit analyze running');
  onShutdown(rt.logger, async () => {
    await Promise.all(jobs.map((j) => j.stop()));
    await app.close();
    await rt.clickhouse.close();
  });
}
