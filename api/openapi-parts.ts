/**
 * The pieces every part of the OpenAPI document is made of: a zod schema as JSON Schema, the
 * error answers and the security every route shares.
 */
import { z } from 'zod';
import { wireSchemas } from './read-params.ts';

/** The error answer's schema (components.schemas.Error). */
export const errorSchema = {
  type: 'object',
  properties: { error: { type: 'string' }, message: { type: 'string' }, request_id: { type: 'string' } },
  required: ['error', 'message'],
};

/** Every route accepts a bearer token or an X-API-Key header. */
export const SECURITY = [{ bearer: [] }, { apiKey: [] }];

/**
 * A zod schema as JSON Schema. A parameter that is a string on the wire but a number to the
 * server (a string-to-number pipe) is published as what read-params.ts declares for it
 * (`wireSchemas`: integer or number with its bounds, or a pattern), not as zod's `{type: string}`.
 */
export const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const doc = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    override: (ctx) => {
      const wire = wireSchemas.get(ctx.zodSchema);
      if (!wire) return;
      for (const k of Object.keys(ctx.jsonSchema)) if (k !== 'description') delete (ctx.jsonSchema as Record<string, unknown>)[k];
      Object.assign(ctx.jsonSchema, wire);
    },
  }) as Record<string, unknown>;
  const { $schema: _drop, ...rest } = doc;
  return rest;
};

/** The answers of a read route that are errors (400 … 503), each described. */
export const READ_ERRORS: Record<string, string> = {
  '400': 'invalid parameter (the message names it)',
  '401': 'missing or unknown API key',
  '403': 'the key lacks the read scope',
  '422': 'the query hit a server-side limit (execution time, result rows): narrow from/to',
  '429': 'rate limit exceeded (see Retry-After)',
  '503': 'ClickHouse unavailable (see Retry-After)',
};
// Node's limit of the request line and headers together (16 KiB). The longest parameters the
// spec allows stay far below it (cursors are base64url: nothing to percent-encode); only
// oversized headers of the client's own reach it. Answered without a body.
export const HEADERS_TOO_LARGE = { '431': { description: 'request line and headers over 16 KiB in all' } };

/** Error answers by status code, each an Error object. */
export const errors = (codes: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(codes).map(([code, description]) => [code, { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }]),
  );

