/**
 * ModelTurn: one request of an agent to its model and the model's answer — the turn that decided
 * which tools to call. Kept beside the calls of its task so that a task's cost includes the model
 * and each call can be traced to the turn that asked for it. Produced from the model spans of an
 * OTLP trace (GenAI `chat`, OpenInference `LLM`, OpenLLMetry, the AI SDK) or sent by an emitter as a
 * `model_turn` packet; lands in segment `model_turns`. Messages' text is part of it only where the
 * deployment asks for it (OTLP_TURN_MESSAGES=on).
 */
import { z } from 'zod';
import { nameSchema, timestampSchema, uuidSchema } from './common.ts';
import { MAX_MESSAGES } from './vocabulary.ts';

/** A tool call a turn asked for: the id the model gave it (when the dialect has ids) and the tool. */
export const requestedToolCallSchema = z.strictObject({
  id: z.string().min(1).max(256).nullable().describe('the tool-call id the model gave it; a call carrying the same tool_call_id (result_summary.tool_call_id) answers it'),
  tool_id: nameSchema,
});
/** A tool call a turn asked for. */
export type RequestedToolCall = z.infer<typeof requestedToolCallSchema>;

const tokens = z.number().int().min(0).nullable();


/** Zod contract of a ModelTurn; unknown fields are rejected. */
export const modelTurnSchema = z.strictObject({
  turn_id: uuidSchema.describe('unique per turn; from a span: UUIDv5 of its trace and span ids, so a re-export adds nothing'),
  task_id: nameSchema,
  agent_id: nameSchema,
  model: z.string().min(1).max(256).describe('the model that answered (else the one requested)'),
  provider: z.string().min(1).max(256).nullable(),
  input_tokens: tokens,
  output_tokens: tokens,
  cached_input_tokens: tokens.describe('of input_tokens, those read from the provider\'s prompt cache'),
  cost_usd: z.number().min(0).nullable(),
  cost_source: z.enum(['reported', 'price_table']).nullable().describe('reported by the producer, or computed from tool-audit\'s price table; null when neither knows'),
  duration_ms: z.number().int().min(0),
  status: z.enum(['success', 'error']),
  error: z.string().max(65_536).nullable(),
  requested_tool_calls: z.array(requestedToolCallSchema).max(256).describe('in the order the model asked for them'),
  trace_id: z.string().regex(/^[0-9a-f]{32}$/).nullable().describe('the OTLP trace the turn came from, when it came from one'),
  span_id: z.string().regex(/^[0-9a-f]{16}$/).nullable(),
  created_at: timestampSchema.describe('when the answer was complete'),
  messages: z
    .string()
    .max(MAX_MESSAGES)
    .nullable()
    .optional()
    .describe("the turn's messages as its span carried them: a JSON object of the span's message attributes (only with OTLP_TURN_MESSAGES=on; redacted at ingest like every stored text). Absent or null: not stored"),
});
/** A ModelTurn. */
export type ModelTurn = z.infer<typeof modelTurnSchema>;
