/**
 * A task's model turns, as the task view serves them beside its calls: each turn with the calls
 * that answer the tool calls it asked for. A call answers a request when it carries the request's
 * tool-call id (result_summary.tool_call_id); a request without an id (a dialect that has none) is
 * answered by the first call of its tool after the turn that no other request claimed.
 */
import type { ModelTurnView } from '../schemas/answers.ts';
import { isoTime, type QuerySpec } from './sql.ts';

/** SELECT list of a turn (requested_tool_calls as its JSON text, created_at in ms). */
export const TURN_COLUMNS = `toString(turn_id) AS turn_id, task_id, agent_id, model, provider, input_tokens, output_tokens,
  cached_input_tokens, cost_usd, cost_source, duration_ms, status, error, requested_tool_calls, trace_id, span_id,
  toUnixTimestamp64Milli(created_at) AS created_ms, messages`;

/** A task's turns in a time range, oldest first (one turn per turn_id). */
export const TASK_TURNS: QuerySpec = {
  name: 'task_turns',
  description: "One task's model turns completed in [from, to], oldest first.",
  sql: `SELECT ${TURN_COLUMNS}
FROM {db:Identifier}.model_turns
WHERE task_id = {task_id:String} AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at <= {to:DateTime64(3, 'UTC')}
ORDER BY created_at, turn_id
LIMIT 1 BY turn_id
LIMIT {limit:UInt32}`,
  params: { db: 'the database', task_id: 'the task', from: 'earliest completion', to: 'latest completion', limit: 'turns at most' },
  settings: { max_threads: 1 },
};

/** A turn as read. */
export interface TurnReadRow {
  turn_id: string;
  task_id: string;
  agent_id: string;
  model: string;
  provider: string | null;
  input_tokens: number | string | null;
  output_tokens: number | string | null;
  cached_input_tokens: number | string | null;
  cost_usd: number | null;
  cost_source: 'reported' | 'price_table' | null;
  duration_ms: number | string;
  status: 'success' | 'error';
  error: string | null;
  requested_tool_calls: string;
  trace_id: string;
  span_id: string;
  created_ms: number | string;
  messages: string | null;
}

/** The calls a turn's requests are matched against. */
export interface CallForTurn {
  call_id: string;
  tool_id: string;
  created_at: string;
  /** result_summary.tool_call_id, when the call carries one. */
  tool_call_id?: string;
}

const count = (v: number | string | null) => (v === null ? null : Number(v));

/** Turns (oldest first) with each request's answering call among `calls` (call order). Pure. */
export function linkTurns(rows: readonly TurnReadRow[], calls: readonly CallForTurn[]): ModelTurnView[] {
  const byToolCallId = new Map(calls.filter((c) => c.tool_call_id).map((c) => [c.tool_call_id as string, c.call_id]));
  const claimed = new Set(byToolCallId.values());
  return rows.map((r) => {
    const at = isoTime(r.created_ms);
    const asked = JSON.parse(r.requested_tool_calls) as Array<{ id: string | null; tool_id: string }>;
    const requested = asked.map((q) => {
      let callId = q.id === null ? undefined : byToolCallId.get(q.id);
      if (callId === undefined && q.id === null) {
        // Without ids: the first unclaimed call of the tool after the turn.
        callId = calls.find((c) => c.tool_id === q.tool_id && c.created_at >= at && !claimed.has(c.call_id))?.call_id;
        if (callId !== undefined) claimed.add(callId);
      }
      return { id: q.id, tool_id: q.tool_id, call_id: callId ?? null };
    });
    return {
      turn_id: r.turn_id,
      agent_id: r.agent_id,
      model: r.model,
      provider: r.provider,
      input_tokens: count(r.input_tokens),
      output_tokens: count(r.output_tokens),
      cached_input_tokens: count(r.cached_input_tokens),
      cost_usd: r.cost_usd === null ? null : Number(r.cost_usd),
      cost_source: r.cost_source,
      duration_ms: Number(r.duration_ms),
      status: r.status,
      error: r.error,
      requested_tool_calls: requested,
      trace_id: r.trace_id || null,
      span_id: r.span_id || null,
      created_at: at,
      messages: r.messages ?? null,
    };
  });
}
