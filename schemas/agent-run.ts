/**
 * AgentRun: one run of an agent over a task — the span a framework opens around everything the
 * agent did (GenAI `invoke_agent`, OpenInference `AGENT` and a trace's root `CHAIN`, OpenLLMetry
 * `agent`/`workflow`, the AI SDK's `ai.generateText`/`ai.streamText`). It gives the task a name
 * and the agent that ran it; its calls and model turns are recorded on their own. Tokens are not
 * part of it: a run's usage is the sum of its turns', which are stored (summing both would count
 * the model twice). Lands in segment `agent_runs`.
 */
import { z } from 'zod';
import { nameSchema, timestampSchema, uuidSchema } from './common.ts';

/** Zod contract of an AgentRun; unknown fields are rejected. */
export const agentRunSchema = z.strictObject({
  run_id: uuidSchema.describe('unique per run; from a span: UUIDv5 of its trace and span ids, so a re-export adds nothing'),
  task_id: nameSchema,
  agent_id: nameSchema.describe('the agent that ran (its configured name, else the framework\'s name for it)'),
  name: z.string().min(1).max(256).describe('what the run is called (the span\'s name, or the workflow\'s): what the task is shown as'),
  duration_ms: z.number().int().min(0),
  status: z.enum(['success', 'error']),
  error: z.string().max(65_536).nullable(),
  trace_id: z.string().regex(/^[0-9a-f]{32}$/).nullable().describe('the OTLP trace the run came from, when it came from one'),
  span_id: z.string().regex(/^[0-9a-f]{16}$/).nullable(),
  parent_span_id: z.string().regex(/^[0-9a-f]{16}$/).nullable().describe('the span the run was started under (null at a trace\'s root): a run under another run is a sub-agent'),
  created_at: timestampSchema.describe('when the run ended'),
});
/** An AgentRun. */
export type AgentRun = z.infer<typeof agentRunSchema>;
