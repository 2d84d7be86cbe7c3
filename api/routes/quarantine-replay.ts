/**
 * POST /v1/quarantine/replay (`ingest` scope): re-submits quarantined packets — their stored
 * bytes, or the producer's corrected packets — through the process's own pipeline. Answers 200
 * with a verdict per packet, 400 for a malformed request, 404 when an id is unknown (nothing is
 * replayed then). See docs/operations.md "Fixing a producer".
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKey, Config } from '../../platform/config.ts';
import type { MetricsRegistry } from '../../platform/metrics.ts';
import type { PacketIngest } from '../../ingest/ports.ts';
import { quarantineByIds, quarantineList, type QuarantineListParams } from '../../queries/quarantine.ts';
import type { QuarantineList, QuarantineRecord, ReplayAnswer } from '../../queries/quarantine-schemas.ts';
import type { StatementRunner } from '../../queries/sql.ts';
import { keyIdOf, requireScope } from '../auth.ts';
import { correctedPackets, newReplayId, replayAnswer, replayPackets, replayRequestSchema, type ReplayItem } from '../quarantine-replay.ts';
import { DEFAULT_LIMIT, issuesText, windowOf, type ReadDefaults } from '../read-params.ts';
import { quarantineFilter } from '../read-route-table.ts';
import { isAppError } from '../../platform/errors.ts';

/** What the replay route reads quarantined packets with, and how the process ingests. */
export interface ReplayApiDeps {
  byIds(ids: readonly string[]): Promise<QuarantineRecord[]>;
  list(p: QuarantineListParams): Promise<QuarantineList>;
  /** `kafka`: packets go to Kafka first, the worker records their final outcome. */
  mode: ReplayAnswer['mode'];
  defaults: ReadDefaults;
}

/** The replay API of a process over its ClickHouse door. */
export function replayApiOf(config: Config, ch: StatementRunner, metrics: MetricsRegistry): ReplayApiDeps {
  const q = config.queries;
  const ctx = { limits: { maxExecutionSeconds: q.maxExecutionSeconds, maxResultRows: q.maxResultRows }, expensiveThresholdUsd: q.expensiveThresholdUsd, metrics };
  const db = config.clickhouse.database;
  return {
    byIds: (ids) => quarantineByIds(ch, db, ids, ctx),
    list: (p) => quarantineList(ch, db, p, ctx),
    mode: config.kafka.brokers ? 'kafka' : 'direct',
    defaults: { windowDays: q.defaultWindowDays, expensiveThresholdUsd: q.expensiveThresholdUsd, slowThresholdMs: q.slowThresholdMs },
  };
}

/** Registers POST /v1/quarantine/replay. */
export function registerQuarantineReplayRoute(app: FastifyInstance, deps: ReplayApiDeps & { ingest: PacketIngest; apiKeys: ApiKey[] }): void {
  app.post('/v1/quarantine/replay', { preHandler: requireScope(deps.apiKeys, 'ingest') }, async (req, reply) => {
    const bad = (message: string) => reply.code(400).send({ error: 'bad_request', message, request_id: req.id });
    if (typeof req.body !== 'string') return reply.code(415).send({ error: 'unsupported_media_type', message: 'send application/json', request_id: req.id });
    let json: unknown;
    try {
      json = JSON.parse(req.body);
    } catch (err) {
      return bad(`malformed JSON: ${(err as Error).message}`);
    }
    const parsed = replayRequestSchema.safeParse(json);
    if (!parsed.success) return bad(issuesText(parsed.error));
    const request = parsed.data;
    let items: ReplayItem[];
    let nextCursor: string | null = null;
    if ('ids' in request) {
      const found = new Map((await deps.byIds(request.ids)).map((r) => [r.quarantine_id, r]));
      const missing = request.ids.filter((id) => !found.has(id));
      if (missing.length) return reply.code(404).send({ error: 'not_found', message: `no quarantined packet ${missing.map((m) => JSON.stringify(m)).join(', ')}; nothing was replayed`, request_id: req.id });
      const corrected = correctedPackets(req.body, request.packets?.length ?? 0);
      items = request.ids.map((id, i) => ({ record: found.get(id) as QuarantineRecord, ...(corrected[i] === undefined ? {} : { corrected: corrected[i] }) }));
    } else {
      const f = request.filter;
      try {
        const page = await deps.list({ window: windowOf(f, deps.defaults), limit: f.limit ?? DEFAULT_LIMIT, ...(f.cursor ? { cursor: f.cursor } : {}), ...quarantineFilter(f) });
        // Oldest first: the order the packets first arrived in (a call before its output).
        items = page.records.reverse().map((record) => ({ record }));
        nextCursor = page.next_cursor;
      } catch (err) {
        if (isAppError(err, 'BAD_REQUEST')) return bad(err.message);
        throw err;
      }
    }
    const ctx = { requestId: req.id, replayId: newReplayId(), keyId: keyIdOf(req, deps.apiKeys) };
    const outcomes = items.length ? await deps.ingest.submit(replayPackets(items, ctx)) : [];
    return reply.code(200).send(replayAnswer(items, outcomes, { ...ctx, mode: deps.mode, nextCursor }));
  });
}
