/**
 * ToolOutput (SPEC §1): the artifact a successful call produced.
 */
import { z } from 'zod';
import { nameSchema, sha256HexSchema, timestampSchema, uuidSchema } from './common.ts';
import { CONTENT_TYPES } from './vocabulary.ts';

/** What kind of content an output carries. */
export const contentTypeSchema = z.enum(CONTENT_TYPES);

/** Zod contract of a ToolOutput; unknown fields are rejected. */
export const toolOutputSchema = z.strictObject({
  output_id: uuidSchema,
  call_id: uuidSchema,
  tool_id: nameSchema,
  content_type: contentTypeSchema,
  content_hash: sha256HexSchema,
  size_bytes: z.number().int().positive(),
  sample: z.string().nullable().optional(),
  created_at: timestampSchema,
});

/** A ToolOutput as sent by an emitter. */
export type ToolOutput = z.infer<typeof toolOutputSchema>;
/** One of the seven content types. */
export type ContentType = z.infer<typeof contentTypeSchema>;
