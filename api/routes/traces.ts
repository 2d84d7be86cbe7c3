/**
 * POST /v1/traces: OTLP/HTTP (protobuf or JSON, gzip or not). Tool spans become packets
 * (ingest/otlp/span-map.ts) and go through the same PacketIngest as POST /v1/packets, so every
 * MUST rule, de-duplication and quarantine applies; a tool span that cannot be mapped is
 * quarantined (otlp_unmappable) with its bytes. Other spans are ignored and counted.
 * Answers as the OTLP specification says: 200 with an ExportTraceServiceResponse in the
 * request's encoding (partial_success carrying the count of rejected spans), 400 with a
 * google.rpc.Status for a body that is not a request, 415, 413, 503 with Retry-After.
 */
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiKey } from '../../platform/config.ts';
import { AppError } from '../../platform/errors.ts';
import type { MetricsRegistry } from '../../platform/metrics.ts';
import type { PacketIngest, RawPacket } from '../../ingest/ports.ts';
import { encodeStatus, encodeTraceResponse } from '../../ingest/otlp/otlp-decode.ts';
import type { TraceMapper } from '../../ingest/otlp/map-pool.ts';
import { mapTraces, type MappedTraces } from '../../ingest/otlp/map-traces.ts';
import type { SpanMapOptions } from '../../ingest/otlp/span-map.ts';
import { requireScope } from '../auth.ts';
import { unavailableMessage } from '../unavailable.ts';

const gunzipAsync = promisify(gunzip);

/** What the traces route needs. */
export interface TraceRouteDeps {
  ingest: PacketIngest;
  apiKeys: ApiKey[];
  metrics: MetricsRegistry;
  otlp: SpanMapOptions;
  /** Threads that decode and map bodies (map-pool.ts); without them, this thread does. */
  mapper?: TraceMapper;
  /** Largest body, compressed or not (gzip is inflated up to this many bytes). */
  maxBodyBytes: number;
}

const SPANS_METRIC = 'tool_audit_otlp_spans_total';
const SPANS_HELP = 'Spans received on POST /v1/traces by outcome (accepted, rejected, ignored: neither a tool nor a model span)';

// gRPC status codes used in google.rpc.Status bodies.
const INVALID_ARGUMENT = 3;
const UNAVAILABLE = 14;

/** Registers POST /v1/traces in its own scope (its body parsers differ from /v1/packets'). */
export function registerTraceRoutes(app: FastifyInstance, deps: TraceRouteDeps): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    // Credentials before the body is inflated or parsed.
    scope.addHook('onRequest', requireScope(deps.apiKeys, 'ingest'));
    scope.post('/v1/traces', async (req, reply) => {
      const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const as = type === 'application/json' ? 'json' : type === 'application/x-protobuf' || type === 'application/protobuf' ? 'protobuf' : undefined;
      if (!as) return send(reply, 415, 'json', encodeStatus(INVALID_ARGUMENT, 'send application/x-protobuf or application/json', 'json'));
      const body = await inflate(req.body as Buffer, req.headers['content-encoding'], deps.maxBodyBytes);
      if (!body.ok) return send(reply, body.status, as, encodeStatus(INVALID_ARGUMENT, body.error, as));
      let mapped: MappedTraces;
      let outcomes;
      try {
        // A map thread that died fails its requests as retryable: the exporter sends them again.
        mapped = deps.mapper ? await deps.mapper.map(body.bytes, as) : mapTraces(body.bytes, as, deps.otlp);
        if (!mapped.ok) return send(reply, 400, as, encodeStatus(INVALID_ARGUMENT, mapped.error, as));
        const raws: RawPacket[] = mapped.packets.map((raw, index) => ({ raw, source: { kind: 'http', requestId: req.id, index } }));
        outcomes = raws.length ? await deps.ingest.submit(raws) : [];
      } catch (err) {
        if (!(err instanceof AppError && err.retryable)) throw err;
        req.log.warn({ err: err.message }, 'OTLP export not stored; the exporter will retry');
        void reply.header('retry-after', '5');
        return send(reply, 503, as, encodeStatus(UNAVAILABLE, unavailableMessage(err.code), as));
      }
      const { spanOf, ignored } = mapped;
      const rejected = new Map<number, string>();
      outcomes.forEach((o, i) => {
        if (o.status === 'rejected' && !rejected.has(spanOf[i]!)) rejected.set(spanOf[i]!, `${o.reason?.code}: ${o.reason?.message}`);
      });
      const toolSpans = new Set(spanOf).size;
      deps.metrics.inc(SPANS_METRIC, SPANS_HELP, { outcome: 'ignored' }, ignored);
      deps.metrics.inc(SPANS_METRIC, SPANS_HELP, { outcome: 'accepted' }, toolSpans - rejected.size);
      deps.metrics.inc(SPANS_METRIC, SPANS_HELP, { outcome: 'rejected' }, rejected.size);
      const reasons = [...new Set(rejected.values())];
      const message = reasons.length ? `${rejected.size} tool span(s) quarantined: ${reasons.slice(0, 5).join('; ').slice(0, 2000)}` : '';
      return send(reply, 200, as, encodeTraceResponse(rejected.size, message, as));
    });
  });
}

function send(reply: FastifyReply, status: number, as: 'json' | 'protobuf', body: Uint8Array | string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', as === 'json' ? 'application/json' : 'application/x-protobuf')
    .send(typeof body === 'string' ? body : Buffer.from(body));
}

type Inflated = { ok: true; bytes: Buffer } | { ok: false; status: number; error: string };

async function inflate(body: Buffer | undefined, encoding: string | string[] | undefined, maxBytes: number): Promise<Inflated> {
  const bytes = body ?? Buffer.alloc(0);
  const enc = String(encoding ?? 'identity').trim().toLowerCase();
  if (enc === 'identity' || enc === '') return { ok: true, bytes };
  if (enc !== 'gzip') return { ok: false, status: 415, error: `content-encoding ${enc} is not supported (gzip or none)` };
  try {
    return { ok: true, bytes: await gunzipAsync(bytes, { maxOutputLength: maxBytes }) };
  } catch (err) {
    const tooLarge = (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
    return tooLarge
      ? { ok: false, status: 413, error: `the inflated body exceeds ${maxBytes} bytes` }
      : { ok: false, status: 400, error: `not valid gzip: ${(err as Error).message}` };
  }
}
