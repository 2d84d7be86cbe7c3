/**
 * The fastify application, built apart from `listen` so tests drive it with `app.inject()`.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ApiKey } from '../platform/config.ts';
import { AppError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { answerOtherMethods, collectRouteMethods } from './method-not-allowed.ts';
import { registerHealthRoutes, type ReadinessCheck } from './routes/health.ts';
import type { PacketIngest } from '../ingest/ports.ts';
import { registerPacketRoutes } from './routes/packets.ts';
import { registerReadRoutes, type ReadApiDeps } from './routes/read.ts';

/** Dependencies of {@link buildApp}. */
export interface AppDeps {
  /** Absent in processes that do not take packets over HTTP (`tool-audit ingest`). */
  ingest?: PacketIngest;
  /** The read API of SPEC §5 (and /openapi.json); absent in processes that do not serve it. */
  read?: ReadApiDeps;
  readiness: ReadinessCheck;
  metrics: MetricsRegistry;
  apiKeys: ApiKey[];
  maxBodyBytes: number;
  logger: Logger;
}

/** Builds the HTTP API (not listening). */
export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    // pino's Logger is a FastifyBaseLogger; the cast only keeps fastify's generics at their defaults.
    loggerInstance: deps.logger as unknown as FastifyBaseLogger,
    bodyLimit: deps.maxBodyBytes,
    genReqId: () => randomUUID(),
    // Path ids (tool_id, task_id …) may be 256 characters, percent-encoded up to 12 bytes each;
    // longer ones are refused by the router (414) before any handler runs.
    routerOptions: { maxParamLength: 4096 },
  });
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    deps.metrics.observe('tool_audit_http_request_seconds', 'HTTP request latency', reply.elapsedTime / 1000, {
      route,
      method: req.method,
      status: String(reply.statusCode),
    });
  });
  app.setErrorHandler(async (err: { statusCode?: number; code?: string; message: string }, req, reply) => {
    // An infrastructure fault that may pass (ClickHouse or Kafka down) is a 503 worth retrying.
    const status = err instanceof AppError && err.retryable ? 503 : (err.statusCode ?? 500);
    if (status === 503) void reply.header('retry-after', '5');
    if (status >= 500) req.log.error({ err }, 'request failed');
    if (status === 503) {
      req.log.warn({ err: err.message }, 'dependency unavailable');
      return reply.code(503).send({ error: 'unavailable', message: err.message, request_id: req.id });
    }
    const error = status === 413 ? 'payload_too_large' : status === 400 ? 'bad_request' : status >= 500 ? 'internal' : 'error';
    await reply.code(status).send({ error, message: status >= 500 ? 'internal error; see server logs' : err.message, request_id: req.id });
  });
  const routeMethods = collectRouteMethods(app);
  registerHealthRoutes(app, deps);
  if (deps.ingest) registerPacketRoutes(app, { ingest: deps.ingest, apiKeys: deps.apiKeys });
  if (deps.read) registerReadRoutes(app, { ...deps.read, apiKeys: deps.apiKeys });
  answerOtherMethods(app, routeMethods); // after the last route: 405 with Allow for the other methods
  return app;
}
