/**
 * `tool-audit analyze`: the dependency analyzer, the auditor and the hints job, as their own process (also
 * run inside `serve` unless ANALYZER_ENABLED=false). Run one per ClickHouse database.
 */
import { startJobs } from '../analyzers/jobs.ts';
import { buildApp } from '../api/app.ts';
import { jobsReport } from '../api/routes/health.ts';
import { auditLogOptions } from './audit-log-key.ts';
import { hintsJobOptions } from './hints.ts';
import { onShutdown, startRuntime } from './runtime.ts';

/** Runs until SIGTERM; /healthz, /readyz and /metrics on PORT. */
export async function analyze(): Promise<void> {
  const rt = await startRuntime('tool-audit-analyze');
  const { metrics } = rt;
  const auditLog = await auditLogOptions(rt.config, rt.logger, metrics);
  const jobs = startJobs({ clickhouse: rt.clickhouse, metrics, logger: rt.logger }, { analysis: rt.config.analysis, hints: hintsJobOptions(rt.config), ...(auditLog ? { auditLog } : {}) });
  const app = buildApp({
    readiness: async () => {
      const clickhouse = await rt.clickhouse.ping();
      const checks = { clickhouse, ...jobs.checks() };
      return { ready: Object.values(checks).every((c) => c.ok), checks, jobs: jobsReport(jobs.health()) };
    },
    metrics,
    apiKeys: rt.config.apiKeys,
    edgeLimits: rt.config.edgeLimits,
    maxBodyBytes: rt.config.ingest.maxBodyBytes,
    logger: rt.logger,
  });
  await app.listen({ port: rt.config.port, host: rt.config.host });
  rt.logger.info({ windowMs: rt.config.analysis.dependencyWindowMs, graceMs: rt.config.analysis.auditGraceMs }, 'tool-audit analyze running');
  onShutdown(rt.logger, async () => {
    await jobs.stop();
    await app.close();
    await rt.clickhouse.close();
  });
}
