/**
 * GET /v1/export (read scope, rate-limited like the reads): every stored call, output, dependency
 * or violation of a range (and of one task) as NDJSON, CSV or Parquet, streamed as ClickHouse
 * writes it, so neither this process nor the engine holds the range. An export that fails once
 * its answer has begun ends its transfer without the closing chunk: a client sees a broken
 * download, never a short file passed off as whole.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { EXPORT_LIMIT_DEFAULTS, type ApiKey } from '../../platform/config.ts';
import { EXPORT_CONTENT_TYPES, exportParamsSchema, exportRows } from '../../queries/export.ts';
import { requireScope } from '../auth.ts';
import { clientOf, createRateLimiter, type RateLimitOptions } from '../rate-limit.ts';
import { issuesText, listQuery, pathId, windowOf, type ReadDefaults } from '../read-params.ts';

/** The query string of GET /v1/export. */
export const exportQuerySchema = exportParamsSchema.extend({
  from: listQuery.from,
  to: listQuery.to,
  task: pathId.optional().describe('only what belongs to this task (calls, outputs and dependencies of it; violations naming one of its calls)'),
});

/**
 * Bounds of exports: the window's span in days (up to now), and exports running at once per
 * client (its key, else its address) and in the process. Streaming keeps memory flat whatever the
 * range; these keep one client from holding the engine's threads and disk with exports of all.
 */
export interface ExportLimits {
  maxDays: number;
  perClient: number;
  total: number;
}

/** Dependencies of {@link registerExportRoute}. */
export interface ExportApiDeps {
  clickhouse: ClickHouseDoor;
  defaults: ReadDefaults;
  rateLimit: RateLimitOptions;
  apiKeys: ApiKey[];
  /** Default: the configuration's defaults (EXPORT_LIMIT_DEFAULTS). */
  limits?: ExportLimits;
}

/** Registers GET /v1/export. */
export function registerExportRoute(app: FastifyInstance, deps: ExportApiDeps): void {
  const preHandler = [requireScope(deps.apiKeys, 'read'), createRateLimiter({ ...deps.rateLimit, perKey: deps.apiKeys.length > 0 })];
  const limits = deps.limits ?? EXPORT_LIMIT_DEFAULTS;
  const running = new Map<string, number>();
  let total = 0;
  /** Counts an export of `client` as running until the returned function is called (once). */
  const hold = (client: string) => {
    running.set(client, (running.get(client) ?? 0) + 1);
    total++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      total--;
      const n = (running.get(client) ?? 1) - 1;
      if (n > 0) running.set(client, n);
      else running.delete(client);
    };
  };
  app.get('/v1/export', { preHandler }, async (req, reply) => {
    const q = exportQuerySchema.safeParse(req.query ?? {});
    if (!q.success) return reply.code(400).send({ error: 'bad_request', message: issuesText(q.error), request_id: req.id });
    // A bad window throws BAD_REQUEST: the app's error handler answers 400.
    const window = windowOf(q.data, deps.defaults);
    const days = (Math.min(window.toMs, Date.now()) - window.fromMs) / 86_400_000;
    if (days > limits.maxDays) {
      return reply.code(400).send({ error: 'bad_request', message: `an export covers at most ${limits.maxDays} days (this one ${Math.ceil(days)}): set from/to and export the range in parts`, request_id: req.id });
    }
    const client = clientOf(req, deps.apiKeys.length > 0);
    if ((running.get(client) ?? 0) >= limits.perClient || total >= limits.total) {
      const mine = (running.get(client) ?? 0) >= limits.perClient;
      return reply.code(429).header('retry-after', '5').send({ error: 'too_many_requests', message: mine ? `at most ${limits.perClient} exports at once per client; retry when one ends` : `at most ${limits.total} exports at once; retry shortly`, request_id: req.id });
    }
    const release = hold(client);
    reply.raw.once('close', release);
    const { kind, format } = q.data;
    const rows = exportRows(deps.clickhouse, q.data, window)[Symbol.asyncIterator]();
    // The first bytes before the status: a statement refused at once is an error answer, not a 200.
    const first = await rows.next().catch((err: unknown) => {
      release();
      throw err;
    });
    const name = `tool-audit-${kind}-${new Date(window.fromMs).toISOString().slice(0, 10)}.${format}`;
    const body = Readable.from(
      (async function* () {
        try {
          if (!first.done) yield first.value;
          for (let r = await rows.next(); !r.done; r = await rows.next()) yield r.value;
        } finally {
          // A client gone mid-way ends this generator: end the rows too, so their file and
          // descriptor (embedded) or their server stream go with it.
          await rows.return?.(undefined);
          release();
        }
      })(),
      { objectMode: false },
    );
    return reply.code(200).header('content-type', EXPORT_CONTENT_TYPES[format]).header('content-disposition', `attachment; filename="${name}"`).send(body);
  });
}
