/**
 * Column lists and row mappers shared by the queries: how a stored row becomes what the API
 * returns (task_id '' → null, JSON text served as stored, DateTime64 → ISO with Z, derived flags).
 */
import { RawJson } from '../schemas/raw-json.ts';
import type { Dependency, Invocation, Output } from '../schemas/answers.ts';
import { isoTime } from './sql.ts';

/**
 * A failed call's error_category: the emitters keep a tool-smith error envelope's category in the
 * call's result_summary (emit/result.ts), so it is read from there rather than stored twice; ''
 * for a success or when none was reported. An expression of columns every reader already has (and
 * the projections hold), parsed only where status says the call failed.
 */
export const ERROR_CATEGORY_SQL = "if(status = 'success', '', JSONExtractString(result_summary, 'error_category'))";

/** SELECT list of an invocation (pairs with {@link toInvocation}). */
export const INVOCATION_COLUMNS = `call_id, task_id, tool_id, agent_id, orchestrator, instance_id,
  args, args_hash, status, duration_ms, result_summary, error, cost_usd, tokens_used,
  ${ERROR_CATEGORY_SQL} AS error_category, toUnixTimestamp64Milli(created_at) AS created_ms`;

/** {@link INVOCATION_COLUMNS}, the call's approval and redactions: the task view's list (it reads the table by task; the per-tool routes read the by_tool projection, which has neither). */
export const TASK_INVOCATION_COLUMNS = `${INVOCATION_COLUMNS}, approval, redactions`;

/** An invocation as the query returns it. */
export interface InvocationReadRow {
  call_id: string;
  task_id: string;
  tool_id: string;
  agent_id: string;
  orchestrator: Invocation['orchestrator'];
  instance_id: string;
  args: string;
  args_hash: string;
  status: Invocation['status'];
  duration_ms: number;
  result_summary: string;
  error: string | null;
  cost_usd: number | null;
  tokens_used: string | null;
  error_category: string;
  created_ms: number;
  /** Only with {@link TASK_INVOCATION_COLUMNS}: the approval's JSON text, '' when none. */
  approval?: string;
  /** Only with {@link TASK_INVOCATION_COLUMNS}: where secrets were replaced, JSON text, '' when none. */
  redactions?: string;
}

function jsonObject(text: string): RawJson | Record<string, unknown> {
  // Stored text is JSON of an object written by ingest: served as is, never parsed (a parse
  // would round big integers, -0.0, 1.0 and exponents, and args would no longer hash to
  // args_hash). Only what is not an object's text (never written by ingest) is parsed, and kept
  // visible rather than spliced into the answer.
  if (text.startsWith('{') && text.endsWith('}')) return new RawJson(text);
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { unparsed: text };
  }
}

/** Maps a stored invocation to its API form. */
export function toInvocation(r: InvocationReadRow, expensiveThresholdUsd: number): Invocation {
  const cost = r.cost_usd === null ? null : Number(r.cost_usd);
  return {
    call_id: r.call_id,
    task_id: r.task_id === '' ? null : r.task_id,
    tool_id: r.tool_id,
    agent_id: r.agent_id,
    orchestrator: r.orchestrator,
    instance_id: r.instance_id,
    args: jsonObject(r.args),
    args_hash: r.args_hash,
    status: r.status,
    success: r.status === 'success',
    duration_ms: Number(r.duration_ms),
    result_summary: jsonObject(r.result_summary),
    error: r.error,
    error_category: r.error_category === '' ? null : r.error_category,
    cost_usd: cost,
    expensive: cost !== null && cost > expensiveThresholdUsd,
    tokens_used: r.tokens_used === null ? null : jsonObject(r.tokens_used),
    created_at: isoTime(r.created_ms),
    ...(r.approval === undefined ? {} : { approval: r.approval === '' ? null : (JSON.parse(r.approval) as NonNullable<Invocation['approval']>) }),
    ...(r.redactions === undefined ? {} : { redactions: r.redactions === '' ? [] : (JSON.parse(r.redactions) as NonNullable<Invocation['redactions']>) }),
  };
}

/** SELECT list of an output (pairs with {@link toOutput}). */
export const OUTPUT_COLUMNS = `output_id, call_id, tool_id, content_type,
  content_hash, size_bytes, sample, toUnixTimestamp64Milli(created_at) AS created_ms`;

/** An output as the query returns it. */
export type OutputReadRow = Omit<Output, 'created_at'> & { created_ms: number };

/** Maps a stored output to its API form. */
export function toOutput(r: OutputReadRow): Output {
  const { created_ms, ...rest } = r;
  return { ...rest, size_bytes: Number(r.size_bytes), created_at: isoTime(created_ms) };
}

/** SELECT list of a dependency (the API form as is). */
export const DEPENDENCY_COLUMNS = `task_id, preceding_call_id, succeeding_call_id,
  preceding_tool_id, succeeding_tool_id, time_delta_ms, data_flow, origin`;

/** Normalises a dependency row's numbers. */
export function toDependency(r: Dependency): Dependency {
  return { ...r, time_delta_ms: Number(r.time_delta_ms) };
}
