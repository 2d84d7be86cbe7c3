/**
 * Liveness, readiness and metrics endpoints (SPEC §5 "Also").
 */
import type { FastifyInstance } from 'fastify';
import { JOB_FAILING_AFTER } from '../../analyzers/jobs.ts';
import type { JobHealth } from '../../analyzers/scheduler.ts';
import type { MetricsRegistry } from '../../platform/metrics.ts';

/** Result of one readiness probe. */
export interface ReadinessReport {
  ready: boolean;
  /** What the process needs to do its work: ClickHouse, Kafka, and the start-up steps still loading. */
  checks: Record<string, { ok: boolean; detail?: string }>;
  /** Background jobs, each failing or not: shown, but they never make the process unready (the API does not need them). */
  jobs?: Record<string, { ok: boolean; failures: number; detail?: string }>;
}

/** The jobs part of /readyz: each job's failures in a row; one failing {@link JOB_FAILING_AFTER} times is not ok. */
export function jobsReport(health: JobHealth[]): NonNullable<ReadinessReport['jobs']> {
  return Object.fromEntries(health.map((h) => [h.name, { ok: h.failures < JOB_FAILING_AFTER, failures: h.failures, ...(h.lastError ? { detail: h.lastError } : {}) }]));
}

/** Probes the dependencies the process needs (ClickHouse, Kafka when used, the ingest sink). */
export type ReadinessCheck = () => Promise<ReadinessReport>;

/** Registers /healthz, /readyz and /metrics. */
export function registerHealthRoutes(app: FastifyInstance, deps: { readiness: ReadinessCheck; metrics: MetricsRegistry }): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const report = await deps.readiness();
    return reply.code(report.ready ? 200 : 503).send(report);
  });
  app.get('/metrics', async (_req, reply) =>
    reply.header('content-type', 'text/plain; version=0.0.4; charset=utf-8').send(deps.metrics.render()),
  );
}
