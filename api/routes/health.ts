/**
 * Liveness, readiness and metrics endpoints (SPEC §5 "Also").
 */
import type { FastifyInstance } from 'fastify';
import type { MetricsRegistry } from '../../platform/metrics.ts';

/** Result of one readiness probe. */
export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, { ok: boolean; detail?: string }>;
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
