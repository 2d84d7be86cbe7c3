/**
 * ToolDependency (SPEC §1): call B followed call A of the same task within the window.
 */
import { z } from 'zod';
import { nameSchema, uuidSchema } from './common.ts';

/** Zod contract of a ToolDependency; unknown fields are rejected. */
export const toolDependencySchema = z.strictObject({
  task_id: z.string().min(1).max(256),
  preceding_call_id: uuidSchema,
  succeeding_call_id: uuidSchema,
  preceding_tool_id: nameSchema,
  succeeding_tool_id: nameSchema,
  time_delta_ms: z.number().int(),
  data_flow: z.string().max(65_536).nullable().optional(),
});

/** A ToolDependency as sent by an emitter or written by the analyzer. */
export type ToolDependency = z.infer<typeof toolDependencySchema>;
