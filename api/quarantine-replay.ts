/**
 * Replay of quarantined packets (POST /v1/quarantine/replay): the request as data (zod), the
 * packets it re-submits and the answer. Each packet goes through the process's own
 * {@link PacketIngest} — the same rules as any packet — tagged as a replay, so the pipeline
 * records its outcome in `quarantine_replays` and never quarantines it a second time. The
 * quarantine rows themselves are never touched.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { pythonJsonDumps, type JsonValue } from '../schemas/canonical-json.ts';
import { parseLossless } from '../schemas/lossless-json.ts';
import { PACKET_TYPES } from '../schemas/packets.ts';
import type { PacketOutcome, RawPacket } from '../ingest/ports.ts';
import type { QuarantineRecord, ReplayAnswer } from '../queries/quarantine-schemas.ts';
import { listQuery, MAX_LIMIT } from './read-params.ts';

/** At most this many packets per replay request. */
export const MAX_REPLAY = MAX_LIMIT;

const quarantineId = z.string().min(1).max(512);
const packetType = z.enum(PACKET_TYPES);

/** The request body: ids (with corrected packets in place of some), or a filter. */
export const replayRequestSchema = z.union([
  z
    .strictObject({
      ids: z.array(quarantineId).min(1).max(MAX_REPLAY).describe('quarantine_ids to replay, in this order'),
      packets: z
        .array(z.union([z.string(), z.record(z.string(), z.unknown()), z.null()]))
        .max(MAX_REPLAY)
        .optional()
        .describe(
          "packets[i], when not null, replaces the stored bytes of ids[i]: the producer's corrected packet, as its exact text (a string) or as an object (re-serialized, numbers verbatim)",
        ),
    })
    .refine((r) => new Set(r.ids).size === r.ids.length, 'ids must not repeat')
    .refine((r) => (r.packets?.length ?? 0) <= r.ids.length, 'packets must not be longer than ids'),
  z.strictObject({
    filter: z.strictObject({
      reason: z.string().min(1).max(64).optional(),
      source: z.string().min(1).max(512).optional(),
      packet_type: packetType.optional(),
      from: listQuery.from,
      to: listQuery.to,
      limit: z.number().int().min(1).max(MAX_REPLAY).optional().describe(`packets to replay at most (1…${MAX_REPLAY}, default 100), oldest first within the page`),
      cursor: listQuery.cursor,
    }),
  }),
]);
export type ReplayRequest = z.infer<typeof replayRequestSchema>;

/**
 * The corrected packets of a request, as text: a string as it is; an object as the request
 * carried it, re-serialized from a lossless parse (keys in order, numbers verbatim).
 */
export function correctedPackets(body: string, count: number): Array<string | undefined> {
  const lossless = parseLossless(body) as { packets?: JsonValue[] } | undefined;
  const out: Array<string | undefined> = [];
  for (let i = 0; i < count; i++) {
    const p = lossless?.packets?.[i];
    out.push(p === undefined || p === null ? undefined : typeof p === 'string' ? p : pythonJsonDumps(p, { sortKeys: false }));
  }
  return out;
}

/** What a replay submits for one quarantined packet. */
export interface ReplayItem {
  record: QuarantineRecord;
  corrected?: string;
}

/** The raw packets of a replay, tagged, in the given order. */
export function replayPackets(items: readonly ReplayItem[], ctx: { requestId: string; replayId: string; keyId: string }): RawPacket[] {
  return items.map(({ record, corrected }, index) => {
    const encoding = corrected === undefined ? record.raw_encoding : 'utf8';
    const raw = corrected ?? record.raw;
    return {
      raw,
      encoding,
      bytes: Buffer.byteLength(raw, encoding === 'base64' ? 'base64' : 'utf8'),
      source: { kind: 'http', requestId: ctx.requestId, index },
      replay: { quarantineId: record.quarantine_id, replayId: ctx.replayId, keyId: ctx.keyId, corrected: corrected !== undefined },
    };
  });
}

/** A new replay id. */
export const newReplayId = (): string => randomUUID();

/** The answer of a replay request. */
export function replayAnswer(
  items: readonly ReplayItem[],
  outcomes: readonly PacketOutcome[],
  ctx: { requestId: string; replayId: string; mode: ReplayAnswer['mode']; nextCursor: string | null },
): ReplayAnswer {
  const count = (s: PacketOutcome['status']) => outcomes.filter((o) => o.status === s).length;
  return {
    replay_id: ctx.replayId,
    request_id: ctx.requestId,
    mode: ctx.mode,
    accepted: count('accepted'),
    duplicates: count('duplicate'),
    rejected: count('rejected'),
    results: items.map((it, i) => {
      const o = outcomes[i] as PacketOutcome;
      return {
        quarantine_id: it.record.quarantine_id,
        corrected: it.corrected !== undefined,
        status: o.status,
        packet_type: o.packetType,
        ids: o.ids,
        ...(o.reason ? { reason: o.reason } : {}),
      };
    }),
    next_cursor: ctx.nextCursor,
  };
}
