/**
 * A model turn as an agent records it (`emitter.recordTurn`): the request to the model and its
 * answer — tokens, cost, the tool calls it asked for — sent as a `model_turn` packet beside the
 * calls. Pure: builds and checks the packet; the emitter queues it.
 */
import { randomUUID } from 'node:crypto';
import { modelTurnPacketSchema } from '../schemas/packets.ts';
import type { Redactor } from '../schemas/redaction-policy.ts';

/** A model turn that happened (times and counts as the provider reported them). */
export interface ObservedTurn {
  /** Default a new UUID. */
  turnId?: string;
  /** The task the turn belongs to (the same task_id as its calls). */
  taskId: string;
  agentId?: string;
  /** The model that answered, e.g. gpt-4o-2024-08-06. */
  model: string;
  provider?: string | null;
  inputTokens?: number | null;
  outputTokens?: number | null;
  /** Of inputTokens, those read from the provider's prompt cache. */
  cachedInputTokens?: number | null;
  /** What the turn cost, when known; else the server prices it from its table. */
  costUsd?: number | null;
  /** From request to answer, fractional milliseconds. */
  durationMs: number;
  status?: 'success' | 'error';
  error?: string | null;
  /** The tool calls the model asked for, in its order: `id` is the tool-call id it gave (pass it to invoke as resultSummary.tool_call_id to link the call). */
  requestedToolCalls?: Array<{ id?: string | null; toolId: string }>;
}

/** The packet of a turn (JSON text), or why it cannot be one. */
export function encodeModelTurn(t: ObservedTurn, defaults: { agentId: string; createdAtMs: number }, redactor?: Redactor): { ok: true; turnId: string; packet: string } | { ok: false; error: string } {
  const status = t.status ?? (t.error ? 'error' : 'success');
  const error = status === 'success' ? null : (t.error ?? 'error');
  const packet = {
    type: 'model_turn' as const,
    turn: {
      turn_id: t.turnId ?? randomUUID(),
      task_id: t.taskId,
      agent_id: t.agentId ?? defaults.agentId,
      model: t.model,
      provider: t.provider ?? null,
      input_tokens: t.inputTokens ?? null,
      output_tokens: t.outputTokens ?? null,
      cached_input_tokens: t.cachedInputTokens ?? null,
      cost_usd: t.costUsd ?? null,
      cost_source: t.costUsd === undefined || t.costUsd === null ? null : ('reported' as const),
      duration_ms: Math.max(0, Math.round(t.durationMs)),
      status,
      error: error !== null && redactor ? redactor.text(error).slice(0, 65_536) : error?.slice(0, 65_536) ?? null,
      requested_tool_calls: (t.requestedToolCalls ?? []).map((q) => ({ id: q.id ?? null, tool_id: q.toolId })),
      trace_id: null,
      span_id: null,
      created_at: new Date(defaults.createdAtMs).toISOString(),
    },
  };
  // Judged here by the contract ingest judges it by: a bad turn is reported to the caller's log, not quarantined.
  const r = modelTurnPacketSchema.safeParse(packet);
  if (!r.success) return { ok: false, error: r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
  return { ok: true, turnId: packet.turn.turn_id, packet: JSON.stringify(packet) };
}
