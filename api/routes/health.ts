/**
 * Liveness, readiness and metrics endpoints (SPEC §5 "Also").
 */
import type { FastifyInstance } from 'fastify';
import { JOB_FAILING_AFTER } from '../../analyzers/jobs.ts';
import type { JobHealth } from '../../analyzers/scheduler.ts';
import type { ApiKey } from '../../platform/config.ts';
import type { MetricsRegistry } from '../../platform/metrics.ts';
import { admit } from '../auth.ts';

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

/**
 * The report without its `detail` texts: what an orchestrator's probe needs (ready, and which check
 * or job is not ok), without the job errors' SQL, hosts and paths, which are for keyed callers.
 */
export function withoutDetail(report: ReadinessReport): ReadinessReport {
  const strip = <T extends { detail?: string }>(xs: Record<string, T>): Record<string, Omit<T, 'detail'>> =>
    Object.fromEntries(Object.entries(xs).map(([name, { detail: _detail, ...rest }]) => [name, rest]));
  return { ready: report.ready, checks: strip(report.checks), ...(report.jobs ? { jobs: strip(report.jobs) } : {}) };
}

/**
 * Registers /healthz, /readyz and /metrics. /readyz answers everyone; its details need a key with
 * the read scope, and /metrics one with the metrics or read scope (when keys are configured).
 */
export function registerHealthRoutes(app: FastifyInstance, deps: { readiness: ReadinessCheck; metrics: MetricsRegistry; apiKeys: ApiKey[] }): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (req, reply) => {
    const report = await deps.readiness();
    const detailed = admit(deps.apiKeys, req.headers, 'read').ok;
    return reply.code(report.ready ? 200 : 503).send(detailed ? report : withoutDetail(report));
  });
  // Metrics name routes, tools, jobs and their failures: for a key with the metrics (or read) scope.
  app.get('/metrics', async (req, reply) => {
    const a = admit(deps.apiKeys, req.headers, 'metrics');
    if (!a.ok && !admit(deps.apiKeys, req.headers, 'read').ok) {
      if (a.challenge) void reply.header('www-authenticate', 'Bearer');
      return reply.code(a.status).send({ ...a.body, request_id: req.id });
    }
    return reply.header('content-type', 'text/plain; version=0.0.4; charset=utf-8').send(deps.metrics.render());
  });
}
