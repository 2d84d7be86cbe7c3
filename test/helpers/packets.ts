/**
 * Builders of valid packets for tests, independent of the emitter under test: hashes are
 * computed here with node:crypto over the canonical text the test itself expects.
 */
import { createHash, randomUUID } from 'node:crypto';
import { canonicalArgs, type JsonValue } from '../../schemas/canonical-json.ts';

export const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

export interface InvocationOverrides {
  [k: string]: unknown;
}

/** A valid tool_call packet object; overrides replace invocation fields. */
export function toolCall(over: InvocationOverrides = {}, taskId: string | null = 'task-1') {
  const args = (over.args as JsonValue | undefined) ?? { query: 'quarterly revenue', top_k: 10 };
  const call_id = (over.call_id as string | undefined) ?? randomUUID();
  const invocation = {
    call_id,
    task_id: taskId,
    tool_id: 'search_web',
    agent_id: 'L',
    orchestrator: 'gateway',
    args,
    args_hash: sha(canonicalArgs(args)),
    status: 'success',
    duration_ms: 120,
    result_summary: { result_count: 3 },
    error: null,
    cost_usd: 0.002,
    tokens_used: { input_tokens: 10, output_tokens: 20 },
    created_at: '2026-11-22T10:00:00.000Z',
    ...over,
  };
  return { type: 'tool_call', call_id, invocation };
}

/** A valid output_artifact packet for a call. */
export function outputArtifact(callId: string, content = 'hello world', contentType = 'text', over: Record<string, unknown> = {}) {
  return {
    type: 'output_artifact',
    output: {
      output_id: randomUUID(),
      call_id: callId,
      tool_id: 'search_web',
      content_type: contentType,
      content_hash: sha(content),
      size_bytes: Buffer.byteLength(content),
      sample: content.slice(0, 500),
      created_at: '2026-11-22T10:00:01.000Z',
      ...over,
    },
    content,
  };
}

/** A valid tool_dependency packet. */
export function dependency(over: Record<string, unknown> = {}) {
  return {
    type: 'tool_dependency',
    dependency: {
      task_id: 'task-1',
      preceding_call_id: randomUUID(),
      succeeding_call_id: randomUUID(),
      preceding_tool_id: 'search_web',
      succeeding_tool_id: 'python_execute',
      time_delta_ms: 1500,
      data_flow: null,
      ...over,
    },
  };
}
