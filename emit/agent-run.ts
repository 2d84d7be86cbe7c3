/**
 * An agent run as an agent records it (`emitter.recordRun`): one run of the agent over a task,
 * sent as an `agent_run` packet beside the task's calls — what the server names the task after
 * (its outermost run). Pure: builds and checks the packet; the emitter queues it. Checked by
 * hand, not with the zod contract (schemas/agent-run.ts): the emitter package carries no zod; the
 * unit tests judge what it sends with the ingest validator.
 */
import { randomUUID } from 'node:crypto';
import type { Redactor } from '../schemas/redaction-policy.ts';
import { MAX_NAME_LENGTH } from '../schemas/vocabulary.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_ERROR = 65_536;
const isName = (v: unknown): v is string => typeof v === 'string' && v.length >= 1 && v.length <= MAX_NAME_LENGTH;

/** An agent run that ended (now: the packet's created_at is when it is recorded). */
export interface ObservedRun {
  /** Default a new UUID. */
  runId?: string;
  /** The task the run worked on (the same task_id as its calls). */
  taskId: string;
  agentId?: string;
  /** What the run is called: what the task is shown as, e.g. "Refund request #4411". */
  name: string;
  /** From start to end, fractional milliseconds. */
  durationMs: number;
  status?: 'success' | 'error';
  error?: string | null;
}

/** Why a run's fields cannot be a packet, or undefined when they can. */
function problem(r: ObservedRun, runId: string, agentId: string): string | undefined {
  if (!UUID.test(runId)) return `runId must be a UUID; got ${JSON.stringify(runId)}`;
  for (const [field, v] of [['taskId', r.taskId], ['agentId', agentId], ['name', r.name]] as const) if (!isName(v)) return `${field} must be a string of 1 to ${MAX_NAME_LENGTH} characters`;
  if (!(typeof r.durationMs === 'number' && Number.isFinite(r.durationMs) && r.durationMs >= 0)) return 'durationMs must be a number ≥ 0';
  if (r.status !== undefined && r.status !== 'success' && r.status !== 'error') return "status must be 'success' or 'error'";
  return undefined;
}

/** The packet of a run (JSON text), or why it cannot be one. Name and error go through the redactor. */
export function encodeAgentRun(r: ObservedRun, defaults: { agentId: string; createdAtMs: number }, redactor?: Redactor): { ok: true; runId: string; packet: string } | { ok: false; error: string } {
  const runId = r.runId ?? randomUUID();
  const agentId = r.agentId ?? defaults.agentId;
  const bad = problem(r, runId, agentId);
  if (bad) return { ok: false, error: bad };
  const status = r.status ?? (r.error ? 'error' : 'success');
  const error = status === 'success' ? null : (r.error ?? 'error');
  const run = {
    run_id: runId.toLowerCase(),
    task_id: r.taskId,
    agent_id: agentId,
    name: redactor ? redactor.text(r.name) : r.name,
    duration_ms: Math.round(r.durationMs),
    status,
    error: error === null ? null : (redactor ? redactor.text(error) : error).slice(0, MAX_ERROR),
    trace_id: null,
    span_id: null,
    parent_span_id: null,
    created_at: new Date(defaults.createdAtMs).toISOString(),
  };
  return { ok: true, runId: run.run_id, packet: JSON.stringify({ type: 'agent_run', run }) };
}
