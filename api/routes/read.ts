/**
 * The read API (SPEC §5): every route of READ_ROUTES behind the `read` scope and the rate limit,
 * with validated inputs, and GET /openapi.json. Answers: 200, 400 (the parameter and why), 401/403
 * (never data), 422 (a server-side query limit was hit), 429, 503 (ClickHouse unavailable).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiKey, Config } from '../../platform/config.ts';
import type { MetricsRegistry } from '../../platform/metrics.ts';
import { createReadQueries, type ReadQueries } from '../../queries/index.ts';
import type { StatementRunner } from '../../queries/sql.ts';
import { isAppError } from '../../platform/errors.ts';
import { stringifyWithRaw } from '../../schemas/raw-json.ts';
import { requireScope } from '../auth.ts';
import { openApiDocument } from '../openapi.ts';
import { createRateLimiter, type RateLimitOptions } from '../rate-limit.ts';
import { issuesText, type ReadDefaults } from '../read-params.ts';
import { READ_ROUTES } from '../read-route-table.ts';
import type { BudgetService } from '../budgets/service.ts';
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import type { ExportApiDeps } from './export.ts';

/** Dependencies of {@link registerReadRoutes}. */
export interface ReadApiDeps {
  queries: ReadQueries;
  defaults: ReadDefaults;
  rateLimit: RateLimitOptions;
}

/** The read API of a process, from its configuration and the ClickHouse door of its database. */
export function readApiOf(config: Config, ch: StatementRunner, metrics: MetricsRegistry, budgets?: BudgetService): ReadApiDeps {
  const q = config.queries;
  const queries = createReadQueries(ch, config.clickhouse.database, {
    limits: { maxExecutionSeconds: q.maxExecutionSeconds, maxResultRows: q.maxResultRows },
    expensiveThresholdUsd: q.expensiveThresholdUsd,
    metrics,
  });
  return {
    // The process that owns budgets answers from memory, with its reservations.
    queries: budgets ? { ...queries, budgets: async () => budgets.list() } : queries,
    defaults: { windowDays: q.defaultWindowDays, expensiveThresholdUsd: q.expensiveThresholdUsd, slowThresholdMs: q.slowThresholdMs },
    rateLimit: config.rateLimit,
  };
}

/** The export route's dependencies: the door it runs on, and the reads' defaults and rate limit. */
export function exportApiOf(config: Config, clickhouse: ClickHouseDoor): Omit<ExportApiDeps, 'apiKeys'> {
  return { clickhouse, defaults: { windowDays: config.queries.defaultWindowDays, expensiveThresholdUsd: config.queries.expensiveThresholdUsd, slowThresholdMs: config.queries.slowThresholdMs }, rateLimit: config.rateLimit, limits: config.exportLimits };
}

/** Registers the read routes and /openapi.json. */
export function registerReadRoutes(app: FastifyInstance, deps: ReadApiDeps & { apiKeys: ApiKey[]; version?: string }): void {
  const preHandler = [requireScope(deps.apiKeys, 'read'), createRateLimiter({ ...deps.rateLimit, perKey: deps.apiKeys.length > 0 })];
  const openapi = JSON.stringify(openApiDocument(READ_ROUTES, deps.version ?? '0.1.0'));
  app.get('/openapi.json', async (_req, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(openapi));

  for (const route of READ_ROUTES) {
    app.get(route.url, { preHandler }, async (req, reply) => {
      const params = route.params ? route.params.safeParse(req.params) : { success: true as const, data: {} };
      if (!params.success) return bad(reply, req.id, issuesText(params.error));
      const query = route.query.safeParse(req.query ?? {});
      if (!query.success) return bad(reply, req.id, issuesText(query.error));
      try {
        const body = await route.run(deps.queries, { params: params.data as Record<string, string>, query: query.data }, deps.defaults);
        // args, result_summary and tokens_used are spliced in as stored (schemas/raw-json.ts).
        return reply.code(200).header('content-type', 'application/json; charset=utf-8').send(stringifyWithRaw(body));
      } catch (err) {
        if (isAppError(err, 'INTEGRITY')) return reply.code(409).send({ error: 'integrity', message: err.message, request_id: req.id });
        if (isAppError(err, 'CLICKHOUSE_LIMIT_EXCEEDED')) {
          // ClickHouse's text quotes the statement: logged, not answered.
          req.log.warn({ err: err.message }, 'query limit exceeded');
          return reply.code(422).send({ error: 'query_limit_exceeded', message: 'the query hit a server-side limit (execution time or result rows): narrow from/to or the filters', request_id: req.id });
        }
        throw err; // the app's error handler: 400 / 404 for BAD_REQUEST / NOT_FOUND, 503 when retryable, else 500
      }
    });
  }
}

function bad(reply: FastifyReply, requestId: string, message: string) {
  return reply.code(400).send({ error: 'bad_request', message, request_id: requestId });
}
