/**
 * ToolInvocation (SPEC §1): one tool call, on success and on failure.
 */
import { z } from 'zod';
import { jsonObjectSchema, nameSchema, sha256HexSchema, timestampSchema, uuidSchema } from './common.ts';
import { MAX_APPROVAL_REFERENCE, MAX_NAME_LENGTH, ORCHESTRATORS, TOOL_STATUSES } from './vocabulary.ts';

/** Where a call was executed. */
export const orchestratorSchema = z.enum(ORCHESTRATORS);
/** Outcome of a call. */
export const statusSchema = z.enum(TOOL_STATUSES);

/**
 * A human approval of the call (tool-smith's `requires_approval`): who approved it, when, and
 * where the approval is recorded. Given by the orchestrator that asked for it; M9 checks that a
 * tool requiring approval has one dated no later than the call.
 */
export const approvalSchema = z.strictObject({
  approved_by: nameSchema,
  approved_at: timestampSchema,
  reference: z.string().min(1).max(MAX_APPROVAL_REFERENCE).optional(),
});

/** Zod contract of a ToolInvocation; unknown fields are rejected. */
export const toolInvocationSchema = z.strictObject({
  call_id: uuidSchema,
  task_id: z.string().min(1).max(MAX_NAME_LENGTH).nullable().optional(),
  tool_id: nameSchema,
  agent_id: nameSchema,
  orchestrator: orchestratorSchema,
  instance_id: nameSchema.optional(),
  args: jsonObjectSchema,
  args_hash: sha256HexSchema,
  status: statusSchema,
  duration_ms: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  result_summary: jsonObjectSchema,
  error: z.string().max(65_536).nullable().optional(),
  cost_usd: z.number().min(0).finite().nullable().optional(),
  tokens_used: z.record(z.string(), z.number().int().min(0)).nullable().optional(),
  created_at: timestampSchema,
  approval: approvalSchema.nullable().optional(),
});

/** An approval as sent. */
export type Approval = z.infer<typeof approvalSchema>;

/** A ToolInvocation as sent by an emitter. */
export type ToolInvocation = z.infer<typeof toolInvocationSchema>;
/** One of the five statuses. */
export type ToolStatus = z.infer<typeof statusSchema>;
/** One of the four orchestrators. */
export type Orchestrator = z.infer<typeof orchestratorSchema>;
