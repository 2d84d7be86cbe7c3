/**
 * Zod contracts of the quarantine answers (GET /v1/quarantine, GET /v1/quarantine/{id},
 * POST /v1/quarantine/replay): types come from them, the OpenAPI document publishes them and the
 * HTTP client checks answers against them.
 */
import { z } from 'zod';

const reasonSchema = z.strictObject({ code: z.string(), message: z.string() });

/** One replay of a quarantined packet, as the pipeline that judged it recorded it. */
export const replaySchema = z.strictObject({
  replay_id: z.string().describe('the replay request'),
  replayed_at: z.string().describe('when the pipeline judged the replayed packet (ISO-8601)'),
  key_id: z.string().describe('which API key asked: "key:" + the first 12 hex digits of its SHA-256, or "open" without keys'),
  corrected: z.boolean().describe("true: the request carried the producer's corrected packet; false: the stored bytes were replayed"),
  outcome: z.enum(['accepted', 'duplicate', 'rejected']).describe('accepted = landed now; duplicate = already stored (nothing added); rejected = still fails (not quarantined again)'),
  packet_type: z.string().nullable(),
  ids: z.array(z.string()).describe('the ids of the replayed packet (call_id; output_id and call_id; the dependency pair)'),
  reason: reasonSchema.nullable().describe('why it still fails, when rejected'),
  source: z.string().describe('where the replayed packet travelled (http:request#index, or kafka:topic/partition@offset in Kafka mode)'),
});

/** One quarantined packet. */
export const quarantineRecordSchema = z.strictObject({
  quarantine_id: z.string().describe('where the packet came from, unique per packet: kafka:topic/partition@offset or http:request_id#index (percent-encode it in a path)'),
  received_at: z.string(),
  reason: reasonSchema,
  source: z.strictObject({
    kind: z.enum(['kafka', 'http']),
    topic: z.string().nullable(),
    partition: z.number().int().nullable(),
    offset: z.string().nullable(),
    request_id: z.string().nullable().describe('the HTTP request that brought the packet (also for HTTP packets that travelled through Kafka)'),
  }),
  packet_type: z.string().nullable(),
  ids: z.array(z.string()),
  raw: z.string().describe('the exact bytes: their text when raw_encoding is utf8, their base64 when base64, empty when none'),
  raw_encoding: z.enum(['utf8', 'base64', 'none']).describe('utf8 = valid UTF-8 text; base64 = the bytes were not UTF-8; none = a Kafka record without a value (null)'),
  replays: z.array(replaySchema).describe('every replay of this packet, oldest first'),
});
export type QuarantineRecord = z.infer<typeof quarantineRecordSchema>;

/** A page of quarantined packets. */
export const quarantineListSchema = z.strictObject({
  records: z.array(quarantineRecordSchema),
  counts: z.record(z.string(), z.number()).describe('reason code → quarantined packets matching the filters'),
  next_cursor: z.string().nullable().describe('pass as ?cursor= for the next page; null on the last page'),
});
export type QuarantineList = z.infer<typeof quarantineListSchema>;

/** One quarantined packet (GET /v1/quarantine/{id}). */
export const quarantineShowSchema = z.strictObject({ record: quarantineRecordSchema });
export type QuarantineShow = z.infer<typeof quarantineShowSchema>;

/** The answer to a replay request. */
export const replayAnswerSchema = z.strictObject({
  replay_id: z.string(),
  request_id: z.string(),
  mode: z.enum(['direct', 'kafka']).describe('direct: judged and written before answering; kafka: judged per packet and durable in Kafka, the worker records the final outcome in replays[]'),
  accepted: z.number().int(),
  duplicates: z.number().int(),
  rejected: z.number().int(),
  results: z.array(
    z.strictObject({
      quarantine_id: z.string(),
      corrected: z.boolean(),
      status: z.enum(['accepted', 'duplicate', 'rejected']),
      packet_type: z.string().nullable(),
      ids: z.array(z.string()),
      reason: reasonSchema.optional(),
    }),
  ),
  next_cursor: z.string().nullable().describe('with a filter: the cursor of the next page of matching packets (null: all were replayed)'),
});
export type ReplayAnswer = z.infer<typeof replayAnswerSchema>;
