/**
 * Model spans → model_turn packets and agent spans → agent_run packets (turn-dialects.ts and
 * agent-dialects.ts say which spans and where each field is). Pure and deterministic like the
 * tool mapping (span-map.ts): ids are UUIDv5 of the trace and span ids, so a re-export is a
 * duplicate.
 */
import { uuidV5 } from '../../schemas/hashing.ts';
import { MAX_NAME_LENGTH } from '../../schemas/vocabulary.ts';
import type { RunFields } from './agent-dialects.ts';
import type { AttrValue, OtlpSpan } from './otlp-decode.ts';
import { agentOf, costOf, NAMESPACE_BYTES, statusOf, taskOf, unmappableSpan, isName, type SpanMapOptions, type SpanMapping } from './span-common.ts';
import { messagesOf, type TurnFields } from './turn-dialects.ts';
import { MAX_MESSAGES } from '../../schemas/vocabulary.ts';

/**
 * A model span → a model_turn packet. Its id is derived like a call's (UUIDv5 of trace and span
 * ids), so a re-export is a duplicate; what the dialect does not say stays null (no tokens, no
 * cost), and the price table is ingest's to apply.
 */
export function mapTurn(span: OtlpSpan, f: TurnFields, opts: SpanMapOptions): SpanMapping {
  const turnId = uuidV5(`${span.traceId}${span.spanId}:turn`, NAMESPACE_BYTES);
  // A turn whose model is not named still has its tokens and its requests to tell.
  const model = typeof f.model === 'string' && f.model !== '' ? f.model.slice(0, MAX_NAME_LENGTH) : 'unknown';
  if (span.startNs === 0n) return unmappableSpan(span, turnId, 'span has no start time');
  const endNs = span.endNs === 0n ? span.startNs : span.endNs;
  const task = taskOf(span, opts);
  if (!isName(task)) return unmappableSpan(span, turnId, `task id (${opts.taskIdAttribute}) longer than ${MAX_NAME_LENGTH} characters`);
  const { status, error } = statusOf(span);
  const cost = costOf(f.cost);
  const turn = {
    turn_id: turnId,
    task_id: task,
    agent_id: agentOf(span),
    model,
    provider: typeof f.provider === 'string' && f.provider !== '' ? f.provider.slice(0, MAX_NAME_LENGTH) : null,
    input_tokens: count(f.inputTokens),
    output_tokens: count(f.outputTokens),
    cached_input_tokens: count(f.cachedInputTokens),
    cost_usd: cost,
    cost_source: cost === null ? null : 'reported',
    duration_ms: Number((endNs > span.startNs ? endNs - span.startNs : 0n) / 1_000_000n),
    status: status === 'success' ? 'success' : 'error',
    error,
    requested_tool_calls: f.toolCalls.slice(0, 256).map((c) => ({ id: c.id === null ? null : c.id.slice(0, MAX_NAME_LENGTH), tool_id: c.tool.slice(0, MAX_NAME_LENGTH) })),
    trace_id: span.traceId,
    span_id: span.spanId,
    created_at: new Date(Number(endNs / 1_000_000n)).toISOString(),
  };
  // Only when asked for, and only when there are some: a turn without them is the same packet as before the setting existed.
  const messages = opts.turnMessages ? messagesOf(span.attributes, f.messageKeys) : null;
  const packet = messages === null ? { type: 'model_turn', turn } : { type: 'model_turn', turn: { ...turn, messages: messages.slice(0, MAX_MESSAGES) } };
  return { kind: 'turn', turnId, packets: [JSON.stringify(packet)] };
}

/**
 * An agent span → an agent_run packet, its id derived like a turn's (a re-export is a duplicate).
 * A name longer than the contract allows is cut, not refused: it labels the task.
 */
export function mapRun(span: OtlpSpan, f: RunFields, opts: SpanMapOptions): SpanMapping {
  const runId = uuidV5(`${span.traceId}${span.spanId}:run`, NAMESPACE_BYTES);
  if (span.startNs === 0n) return unmappableSpan(span, runId, 'span has no start time');
  const endNs = span.endNs === 0n ? span.startNs : span.endNs;
  const task = taskOf(span, opts);
  if (!isName(task)) return unmappableSpan(span, runId, `task id (${opts.taskIdAttribute}) longer than ${MAX_NAME_LENGTH} characters`);
  const { status, error } = statusOf(span);
  const agent = typeof f.agent === 'string' && f.agent !== '' ? f.agent.slice(0, MAX_NAME_LENGTH) : agentOf(span);
  const run = {
    run_id: runId,
    task_id: task,
    agent_id: agent,
    name: (f.name === '' ? agent : f.name).slice(0, MAX_NAME_LENGTH),
    duration_ms: Number((endNs > span.startNs ? endNs - span.startNs : 0n) / 1_000_000n),
    status: status === 'success' ? 'success' : 'error',
    error,
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId ?? null,
    created_at: new Date(Number(endNs / 1_000_000n)).toISOString(),
  };
  return { kind: 'run', runId, packets: [JSON.stringify({ type: 'agent_run', run })] };
}

/** A count attribute (tokens) when it is a whole number ≥ 0. */
function count(v: AttrValue | undefined): number | null {
  return Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : null;
}
