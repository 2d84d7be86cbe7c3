/**
 * POST /v1/packets (SPEC §6): a JSON array or NDJSON of packets in, a verdict per packet out.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKey } from '../../platform/config.ts';
import type { PacketIngest, PacketOutcome } from '../../ingest/ports.ts';
import { requireScope } from '../auth.ts';
import { firstInvalidUtf8, splitPacketBody } from '../packet-body.ts';
import { isUtf8 } from 'node:buffer';

/** Registers the packet ingest route. */
export function registerPacketRoutes(app: FastifyInstance, deps: { ingest: PacketIngest; apiKeys: ApiKey[] }): void {
  // Keep the body as text: each packet's exact bytes matter (hashes, quarantine, replay). The
  // bytes are checked before they become text: invalid UTF-8 would otherwise turn into U+FFFD and
  // be stored altered; such a body is refused as a whole (400), nothing of it is stored.
  // Only JSON and NDJSON are packets: fastify's own text/plain parser would take anything.
  app.removeContentTypeParser('text/plain');
  for (const type of ['application/json', 'application/x-ndjson']) {
    app.addContentTypeParser(type, { parseAs: 'buffer' }, (_req, body, done) => {
      const bytes = body as Buffer;
      if (isUtf8(bytes)) return done(null, bytes.toString('utf8'));
      done(Object.assign(new Error(`the body is not valid UTF-8 (first invalid byte at offset ${firstInvalidUtf8(bytes)}): JSON must be UTF-8 (RFC 8259); nothing was stored`), { statusCode: 400 }));
    });
  }
  app.post('/v1/packets', { preHandler: requireScope(deps.apiKeys, 'ingest') }, async (req, reply) => {
    if (typeof req.body !== 'string') {
      return reply.code(415).send({ error: 'unsupported_media_type', message: 'send the packets as application/json (an array or one packet) or application/x-ndjson', request_id: req.id });
    }
    const split = splitPacketBody(req.body);
    if (!split.ok) return reply.code(400).send({ error: 'bad_request', message: split.error, request_id: req.id });
    const outcomes = await deps.ingest.submit(
      split.packets.map((raw, index) => ({ raw, source: { kind: 'http', requestId: req.id, index } })),
    );
    const count = (s: PacketOutcome['status']) => outcomes.filter((o) => o.status === s).length;
    return reply.code(200).send({
      request_id: req.id,
      // Counted apart, as in results[]: accepted = written now; duplicates = already stored.
      accepted: count('accepted'),
      rejected: count('rejected'),
      duplicates: count('duplicate'),
      results: outcomes.map((o, index) => ({
        index,
        status: o.status,
        packet_type: o.packetType,
        ids: o.ids,
        ...(o.reason ? { reason: o.reason } : {}),
      })),
    });
  });
}
