/**
 * The fastify application, built apart from `listen` so tests drive it with `app.inject()`.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ApiKey } from '../platform/config.ts';
import { AppError, type ErrorCode } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { AllowedMethods, answerOtherMethods, collectRouteMethods, methodNotAllowed, trackServedRoutes } from './method-not-allowed.ts';
import { registerHealthRoutes, type ReadinessCheck } from './routes/health.ts';
import { registerEdgeLimits, type EdgeLimitOptions } from './edge-limits.ts';
import { unavailableMessage } from './unavailable.ts';
import type { PacketIngest } from '../ingest/ports.ts';
import { registerPacketRoutes } from './routes/packets.ts';
import { registerReadRoutes, type ReadApiDeps } from './routes/read.ts';
import { registerTraceRoutes } from './routes/traces.ts';
import type { SpanMapOptions } from '../ingest/otlp/span-map.ts';
import type { TraceMapper } from '../ingest/otlp/map-pool.ts';
import { registerManifestRoutes } from './routes/manifests.ts';
import { registerMcpToolRoutes } from './routes/mcp-tools.ts';
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';

const QUIET_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);
/** The `error` of an answer, by status: one shape, `{error, message, request_id}`, everywhere. */
/** The status of each AppError code that is the request's fault, not the server's. */
const REQUEST_ERROR_STATUS: Partial<Record<ErrorCode, number>> = { BAD_REQUEST: 400, NOT_FOUND: 404 };
const ERROR_NAMES: Record<number, string> = { 400: 'bad_request', 404: 'not_found', 413: 'payload_too_large', 415: 'unsupported_media_type' };
const UNSUPPORTED_MEDIA = 'send the packets as application/json (an array or one packet) or application/x-ndjson';
import { registerQuarantineReplayRoute, type ReplayApiDeps } from './routes/quarantine-replay.ts';
import { registerBudgetRoutes } from './routes/budgets.ts';
import { registerExportRoute, type ExportApiDeps } from './routes/export.ts';
import type { BudgetService } from './budgets/service.ts';

/** Dependencies of {@link buildApp}. */
export interface AppDeps {
  /** Absent in processes that do not take packets over HTTP (`tool-audit ingest`). */
  ingest?: PacketIngest;
  /** The read API of SPEC §5 (and /openapi.json); absent in processes that do not serve it. */
  read?: ReadApiDeps;
  /** POST /v1/quarantine/replay (with `ingest`); absent in processes that do not offer it. */
  replay?: ReplayApiDeps;
  /** GET /v1/export; absent in processes that do not serve reads. */
  export?: Omit<ExportApiDeps, 'apiKeys'>;
  /** PUT /v1/budgets and POST /v1/budget/check; absent in processes that do not own budgets. */
  budgets?: BudgetService;
  /** Where PUT /v1/manifests and POST /v1/mcp/tools store versions; absent in processes that do not take manifests. */
  manifests?: { clickhouse: ClickHouseDoor; now?: () => number };
  readiness: ReadinessCheck;
  metrics: MetricsRegistry;
  apiKeys: ApiKey[];
  maxBodyBytes: number;
  logger: Logger;
  /** How POST /v1/traces maps tool spans (config.otlp); default: task id attribute `tool_audit.task_id`, orchestrator `gateway`. */
  otlp?: SpanMapOptions;
  /** Threads mapping POST /v1/traces bodies; without them the request's thread maps. */
  otlpMapper?: TraceMapper;
  /** Limits in front of every route, 401s included (config.edgeLimits); absent: none. */
  edgeLimits?: EdgeLimitOptions;
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
    // One line per request (the onResponse hook below) instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    deps.metrics.observe('tool_audit_http_request_seconds', 'HTTP request latency', reply.elapsedTime / 1000, {
      route,
      method: req.method,
      status: String(reply.statusCode),
    });
    // Probes and scrapes arrive every few seconds: at debug, they do not drown the log.
    const line = { method: req.method, url: req.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 };
    if (QUIET_ROUTES.has(route)) req.log.debug(line, 'request');
    else req.log.info(line, 'request');
  });
  if (deps.edgeLimits) registerEdgeLimits(app, deps.edgeLimits);
  const allowed = new AllowedMethods();
  trackServedRoutes(app, allowed);
  app.setNotFoundHandler(async (req, reply) => {
    // A method fastify does not route (PROPFIND…) on a path that exists: 405, as for the others.
    const allow = app.supportedMethods.includes(req.method) ? undefined : allowed.allowFor(req.url);
    if (allow) return methodNotAllowed(req, reply, allow);
    return reply.code(404).send({ error: 'not_found', message: `no route ${req.method} ${req.url.split('?')[0]}`, request_id: req.id });
  });
  app.setErrorHandler(async (err: { statusCode?: number; code?: string; message: string }, req, reply) => {
    // An infrastructure fault that may pass (ClickHouse or Kafka down) is a 503 worth retrying; a
    // request the read path could not answer (BAD_REQUEST, NOT_FOUND) is the client's to fix.
    const status = err instanceof AppError ? (err.retryable ? 503 : (REQUEST_ERROR_STATUS[err.code] ?? 500)) : (err.statusCode ?? 500);
    if (status === 503) void reply.header('retry-after', '5');
    if (status >= 500) req.log.error({ err }, 'request failed');
    if (status === 503) {
      // The fault's own text (a host, a path, ClickHouse's statement) is for the log only.
      req.log.warn({ err: err.message }, 'dependency unavailable');
      return reply.code(503).send({ error: 'unavailable', code: err.code, message: unavailableMessage(err.code), request_id: req.id });
    }
    const error = ERROR_NAMES[status] ?? (status >= 500 ? 'internal' : 'error');
    const message = status >= 500 ? 'internal error; see server logs' : status === 415 ? UNSUPPORTED_MEDIA : err.message;
    await reply.code(status).send({ error, message, request_id: req.id });
  });
  const routeMethods = collectRouteMethods(app);
  registerHealthRoutes(app, deps);
  if (deps.ingest) registerPacketRoutes(app, { ingest: deps.ingest, apiKeys: deps.apiKeys });
  if (deps.ingest) {
    const otlp = deps.otlp ?? { taskIdAttribute: 'tool_audit.task_id', defaultOrchestrator: 'gateway', mcpCallSide: 'client' };
    registerTraceRoutes(app, { ingest: deps.ingest, apiKeys: deps.apiKeys, metrics: deps.metrics, otlp, maxBodyBytes: deps.maxBodyBytes, ...(deps.otlpMapper ? { mapper: deps.otlpMapper } : {}) });
  }
  if (deps.read) registerReadRoutes(app, { ...deps.read, apiKeys: deps.apiKeys });
  if (deps.export) registerExportRoute(app, { ...deps.export, apiKeys: deps.apiKeys });
  if (deps.ingest && deps.replay) registerQuarantineReplayRoute(app, { ...deps.replay, ingest: deps.ingest, apiKeys: deps.apiKeys });
  if (deps.budgets) registerBudgetRoutes(app, { budgets: deps.budgets, apiKeys: deps.apiKeys });
  if (deps.manifests) registerManifestRoutes(app, { ...deps.manifests, apiKeys: deps.apiKeys });
  if (deps.manifests) registerMcpToolRoutes(app, { ...deps.manifests, apiKeys: deps.apiKeys });
  // 405 with Allow for the other methods of every path: as the last plugin, so that it runs after
  // the routes of earlier plugins (PUT /v1/manifests, POST /v1/mcp/tools live in scopes of their own) are declared.
  void app.register(async (last) => answerOtherMethods(last, routeMethods, allowed));
  return app;
}
