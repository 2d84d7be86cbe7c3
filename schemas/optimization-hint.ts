/**
 * OptimizationHint (SPEC §8): a suggestion of how the agent's tool use could be cheaper
 * or faster, with the evidence it rests on. Produced by the hints analyzer and accepted from
 * external producers as `optimization_hint` packets; lands in segment `workflow_optimizations`.
 */
import { z } from 'zod';
import { jsonObjectSchema, nameSchema, timestampSchema, uuidSchema } from './common.ts';

/** The kinds of hints: cache an idempotent tool, bundle a data-flow chain into one call, stop a retry storm. */
export const HINT_KINDS = ['cache_candidate', 'bundle_candidate', 'retry_storm'] as const;
/** One of the hint kinds. */
export type HintKind = (typeof HINT_KINDS)[number];

/** At most this many task ids are kept as a hint's sample. */
export const MAX_TASK_SAMPLE = 100;

/** Zod contract of an OptimizationHint; unknown fields are rejected. */
export const optimizationHintSchema = z.strictObject({
  hint_id: uuidSchema.describe('unique per (kind, subject, window): the analyzer derives it, so re-running adds nothing'),
  kind: z.enum(HINT_KINDS),
  tool_ids: z.array(nameSchema).min(1).max(32).describe('the tool (cache_candidate, retry_storm) or the sequence in call order (bundle_candidate, ≥ 2)'),
  task_ids_sample: z.array(z.string().min(1).max(256)).max(MAX_TASK_SAMPLE).describe('some tasks where the pattern was seen'),
  evidence: jsonObjectSchema.describe('kind-specific figures (docs/manifests-budgets-hints.md: Optimization hints)'),
  estimated_savings_ms: z.number().int().min(0),
  estimated_savings_usd: z.number().min(0),
  window_from: timestampSchema.describe('inclusive start of the calls looked at'),
  window_to: timestampSchema.describe('exclusive end of the calls looked at, after window_from'),
  created_at: timestampSchema,
});

/** An OptimizationHint as sent by a producer or written by the analyzer. */
export type OptimizationHint = z.infer<typeof optimizationHintSchema>;
