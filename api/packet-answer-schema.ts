/**
 * The answer of POST /v1/packets (SPEC §6) as a zod contract: what openapi.ts publishes and what
 * the tests check real answers against. Objects are open (not strict) so that a field added to
 * the answer is an addition to the contract, not a break of it.
 */
import { z } from 'zod';
import { PACKET_TYPES } from '../schemas/packets.ts';

/** The verdict on one packet of the body, by its index. */
export const packetVerdictSchema = z.object({
  index: z.number().int().min(0).describe('position of the packet in the body (array element or NDJSON line)'),
  status: z.enum(['accepted', 'duplicate', 'rejected']).describe('duplicate: identical to a packet already stored (no second row)'),
  packet_type: z.enum(PACKET_TYPES).nullable().describe('null when the packet is not recognisable as one'),
  ids: z.array(z.string()).describe('the keys of the packet: call_id; output_id and call_id; the two call_ids of a dependency; or a hint_id'),
  reason: z
    .object({ code: z.string().describe('rejection code (docs/api.md: Packets and rejection codes)'), message: z.string() })
    .optional()
    .describe('why the packet was rejected (and quarantined)'),
});

/** The 200 answer of POST /v1/packets. */
export const packetAnswerSchema = z.object({
  request_id: z.string(),
  accepted: z.number().int().min(0).describe('packets stored or already stored (duplicates included)'),
  rejected: z.number().int().min(0).describe('packets quarantined'),
  duplicates: z.number().int().min(0).describe('accepted packets identical to one already stored'),
  results: z.array(packetVerdictSchema).describe('one verdict per packet, in body order'),
});
