/**
 * A model turn as an agent records it (`emitter.recordTurn`): the request to the model and its
 * answer — tokens, cost, the tool calls it asked for — sent as a `model_turn` packet beside the
 * calls. Pure: builds and checks the packet; the emitter queues it. Checked by hand, not with the
 * zod contract (schemas/model-turn.ts): the emitter package carries no zod; the unit tests judge
 * what it sends with the ingest validator.
 */
import { randomUUID } from 'node:crypto';
import type { Redactor } from '../schemas/redaction-policy.ts';
import { MAX_MESSAGES, MAX_NAME_LENGTH } from '../schemas/vocabulary.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_ERROR = 65_536;
const isName = (v: unknown): v is string => typeof v === 'string' && v.length >= 1 && v.length <= MAX_NAME_LENGTH;
const isCount = (v: unknown): boolean => v === null || (Number.isSafeInteger(v) && (v as number) >= 0);

/** Why a turn's fields cannot be a packet, or undefined when they can. */
function problem(t: ObservedTurn, turnId: string, agentId: string, messages: string | undefined): string | undefined {
  if (!UUID.test(turnId)) return `turnId must be a UUID; got ${JSON.stringify(turnId)}`;
  for (const [field, v] of [['taskId', t.taskId], ['agentId', agentId], ['model', t.model]] as const) if (!isName(v)) return `${field} must be a string of 1 to ${MAX_NAME_LENGTH} characters`;
  if (t.provider != null && !isName(t.provider)) return `provider must be a string of 1 to ${MAX_NAME_LENGTH} characters or null`;
  for (const [field, v] of [['inputTokens', t.inputTokens], ['outputTokens', t.outputTokens], ['cachedInputTokens', t.cachedInputTokens]] as const) if (!isCount(v ?? null)) return `${field} must be a whole number ≥ 0 or null`;
  if (t.costUsd != null && !(typeof t.costUsd === 'number' && Number.isFinite(t.costUsd) && t.costUsd >= 0)) return 'costUsd must be a number ≥ 0 or null';
  if (!(typeof t.durationMs === 'number' && Number.isFinite(t.durationMs) && t.durationMs >= 0)) return 'durationMs must be a number ≥ 0';
  if (t.status !== undefined && t.status !== 'success' && t.status !== 'error') return "status must be 'success' or 'error'";
  const asked = t.requestedToolCalls ?? [];
  if (!Array.isArray(asked) || asked.length > 256) return 'requestedToolCalls must be an array of at most 256';
  if (t.messages !== undefined && messages === undefined) return 'messages must be a JSON value (or JSON text)';
  for (const q of asked) if (!isName(q.toolId) || !(q.id == null || isName(q.id))) return `requestedToolCalls: each needs a toolId (and an id, when given) of 1 to ${MAX_NAME_LENGTH} characters`;
  return undefined;
}

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
  /**
   * The turn's messages, when they should be kept: any JSON value (the request's messages and the
   * answer, as the provider's SDK gives them) or JSON text. Redacted before it leaves (every JSON
   * text inside read as JSON), cut at 1,048,576 characters. Omitted: none stored.
   */
  messages?: unknown;
}

/** The messages as the packet carries them: JSON text (a string is taken as the text itself); undefined when not JSON. */
function messagesText(m: unknown): string | undefined {
  if (typeof m === 'string') return m;
  try {
    return JSON.stringify(m) as string | undefined;
  } catch {
    return undefined; // a cycle or a BigInt
  }
}

/** The packet of a turn (JSON text), or why it cannot be one. */
export function encodeModelTurn(t: ObservedTurn, defaults: { agentId: string; createdAtMs: number }, redactor?: Redactor): { ok: true; turnId: string; packet: string } | { ok: false; error: string } {
  const turnId = t.turnId ?? randomUUID();
  const agentId = t.agentId ?? defaults.agentId;
  // Written once: a turn's messages may be a megabyte.
  const text = t.messages === undefined ? undefined : messagesText(t.messages);
  const bad = problem(t, turnId, agentId, text);
  if (bad) return { ok: false, error: bad };
  const status = t.status ?? (t.error ? 'error' : 'success');
  const error = status === 'success' ? null : (t.error ?? 'error');
  const cost = t.costUsd ?? null;
  const turn = {
    turn_id: turnId.toLowerCase(),
    task_id: t.taskId,
    agent_id: agentId,
    model: t.model,
    provider: t.provider ?? null,
    input_tokens: t.inputTokens ?? null,
    output_tokens: t.outputTokens ?? null,
    cached_input_tokens: t.cachedInputTokens ?? null,
    cost_usd: cost,
    cost_source: cost === null ? null : 'reported',
    duration_ms: Math.round(t.durationMs),
    status,
    error: error === null ? null : (redactor ? redactor.text(error) : error).slice(0, MAX_ERROR),
    requested_tool_calls: (t.requestedToolCalls ?? []).map((q) => ({ id: q.id ?? null, tool_id: q.toolId })),
    trace_id: null,
    span_id: null,
    created_at: new Date(defaults.createdAtMs).toISOString(),
  };
  const messages = text === undefined ? {} : { messages: (redactor ? redactor.text(text) : text).slice(0, MAX_MESSAGES) };
  return { ok: true, turnId: turn.turn_id, packet: JSON.stringify({ type: 'model_turn', turn: { ...turn, ...messages } }) };
}
