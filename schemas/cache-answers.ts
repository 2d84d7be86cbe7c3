/**
 * The answers of the cache simulation (GET /v1/cache/simulation) and its TTL curve (GET
 * /v1/cache/ttl-curve): the API, its OpenAPI document and the CLI share them.
 */
import { z } from 'zod';

const usd = z.number().describe('sum of the hits’ cost_usd (null = 0)');
const toolSimSchema = z.strictObject({
  tool_id: z.string(),
  ttl_ms: z.number().int().nullable().describe('the TTL simulated; null when the tool has none'),
  cacheable: z.boolean().describe('idempotent in the current manifest and a TTL > 0'),
  calls: z.number().int(),
  hits: z.number().int(),
  hit_rate: z.number(),
  saved_ms: z.number().int(),
  saved_usd: usd,
});

/** GET /v1/cache/simulation. */
export const cacheSimulationSchema = z.strictObject({
  tools: z.array(toolSimSchema),
  totals: z.strictObject({ calls: z.number().int(), hits: z.number().int(), hit_rate: z.number(), saved_ms: z.number().int(), saved_usd: usd }),
});
/** An answer of GET /v1/cache/simulation. */
export type CacheSimulation = z.infer<typeof cacheSimulationSchema>;

/** GET /v1/cache/ttl-curve. */
export const ttlCurveSchema = z.strictObject({
  tool_id: z.string().nullable().describe('null: every tool the current manifest declares idempotent, together'),
  cacheable: z.boolean().describe('idempotent in the current manifest (without tool_id: some tool is)'),
  calls: z.number().int(),
  points: z
    .array(z.strictObject({ ttl_ms: z.number().int(), hits: z.number().int(), hit_rate: z.number(), saved_ms: z.number().int(), saved_usd: usd }))
    .describe('one per TTL, shortest first; empty when the window has no call to replay'),
  suggested_ttl_ms: z.number().int().nullable().describe('the shortest TTL reaching 90 % of the 7-day TTL’s saved_ms and saved_usd; null when the 7-day TTL saves nothing'),
});
/** An answer of GET /v1/cache/ttl-curve. */
export type TtlCurve = z.infer<typeof ttlCurveSchema>;
