/**
 * Row shapes written to the ClickHouse segments, and the outcome of decoding one packet (their
 * TabSeparated lines: row-lines.ts). Pure types and helpers: no I/O.
 */
import type { ContentType } from '../schemas/tool-output.ts';
import type { Orchestrator, ToolStatus } from '../schemas/tool-invocation.ts';
import type { PacketType } from '../schemas/packets.ts';
import type { PacketOutcome, PacketSource, RawEncoding, RawPacket } from './ports.ts';

export type { PacketSource, RawPacket } from './ports.ts';

/** Row of `tool_invocations`. task_id '' stands for null. */
export interface InvocationRow {
  call_id: string;
  task_id: string;
  tool_id: string;
  agent_id: string;
  orchestrator: Orchestrator;
  instance_id: string;
  args: string;
  args_hash: string;
  status: ToolStatus;
  duration_ms: number;
  result_summary: string;
  error: string | null;
  cost_usd: number | null;
  tokens_used: string | null;
  created_at: string;
  fingerprint: string;
  source: string;
  /** The call's approval as JSON text ({approved_by, approved_at, reference?}); '' when none. */
  approval: string;
  /** Where secrets were taken out, as JSON [{pointer, rule}] read off the stored placeholders; '' when none. */
  redactions: string;
}

/** Row of `tool_outputs` (metadata; the content itself lives once per hash in `output_contents`). */
export interface OutputRow {
  output_id: string;
  call_id: string;
  tool_id: string;
  content_type: ContentType;
  content_hash: string;
  size_bytes: number;
  sample: string | null;
  created_at: string;
  fingerprint: string;
  source: string;
  /** Where secrets were taken out of the content, as JSON [{pointer, rule}]; '' when none. */
  redactions: string;
}

/** Row of `output_contents`. */
export interface ContentRow {
  content_hash: string;
  content_type: ContentType;
  content: string;
  size_bytes: number;
  last_seen: string;
}

/** Row of `tool_workflows`. */
export interface WorkflowRow {
  task_id: string;
  preceding_call_id: string;
  succeeding_call_id: string;
  preceding_tool_id: string;
  succeeding_tool_id: string;
  time_delta_ms: number;
  data_flow: string | null;
  origin: 'emitted' | 'analyzer';
  fingerprint: string;
  source: string;
}

/** Row of `workflow_optimizations` (migration 011); arrays and evidence as ClickHouse text. */
export interface HintRow {
  hint_id: string;
  kind: string;
  tool_ids: string[];
  task_ids_sample: string[];
  evidence: string;
  estimated_savings_ms: number;
  estimated_savings_usd: number;
  window_from: string;
  window_to: string;
  created_at: string;
  origin: 'producer' | 'analyzer';
  fingerprint: string;
  source: string;
}

/** Row of `model_turns` (migration 044); requested_tool_calls as JSON text. */
export interface TurnRow {
  turn_id: string;
  task_id: string;
  agent_id: string;
  model: string;
  provider: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cached_input_tokens: number | null;
  cost_usd: number | null;
  cost_source: string | null;
  duration_ms: number;
  status: 'success' | 'error';
  error: string | null;
  requested_tool_calls: string;
  trace_id: string;
  span_id: string;
  created_at: string;
  fingerprint: string;
  source: string;
  /** The turn's message attributes as JSON text (migration 047); absent: none stored. */
  messages?: string;
}

/** Row of `agent_runs` (migration 046). */
export interface RunRow {
  run_id: string;
  task_id: string;
  agent_id: string;
  name: string;
  duration_ms: number;
  status: 'success' | 'error';
  error: string | null;
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  created_at: string;
  fingerprint: string;
  source: string;
}

/** Row of `quarantine`. */
export interface QuarantineRow {
  source_key: string;
  source_kind: 'kafka' | 'http';
  topic: string;
  partition: number;
  offset: string;
  request_id: string;
  packet_type: string;
  reason_code: RejectCode;
  reason: string;
  ids: string[];
  raw: string;
  raw_encoding: RawEncoding;
}

/** Row of `quarantine_replays` (migration 008): one replayed packet and what the pipeline did with it. */
export interface ReplayRow {
  quarantine_id: string;
  replay_id: string;
  key_id: string;
  corrected: boolean;
  outcome: PacketOutcome['status'];
  packet_type: string;
  ids: string[];
  reason_code: string;
  reason: string;
  source: string;
}

/** Why a packet was rejected; stable codes for dashboards and replay tooling. */
export type RejectCode =
  | 'oversized'
  | 'invalid_utf8'
  | 'malformed_json'
  | 'schema'
  | 'envelope_mismatch'
  | 'I1_call_id_reused'
  | 'I1_output_id_reused'
  | 'I1_dependency_reused'
  | 'I1_hint_id_reused'
  | 'I1_turn_id_reused'
  | 'I1_run_id_reused'
  | 'hint_window'
  | 'hint_tools'
  | 'I3_error_on_success'
  | 'I5_args_hash'
  | 'I6_dependency'
  | 'I7_output_content'
  | 'otlp_unmappable';

/** A packet that broke a rule: the reason travels with it to quarantine. */
export interface Rejection {
  code: RejectCode;
  message: string;
  packetType: PacketType | null;
  ids: string[];
}

/** A packet that passed every per-packet rule, ready for its segment. */
export type Accepted =
  | { kind: 'invocation'; key: string; row: InvocationRow }
  | { kind: 'output'; key: string; row: OutputRow; content: ContentRow }
  | { kind: 'dependency'; key: string; row: WorkflowRow }
  | { kind: 'hint'; key: string; row: HintRow }
  | { kind: 'turn'; key: string; row: TurnRow }
  | { kind: 'run'; key: string; row: RunRow };

/** Outcome of decoding one packet. */
export type DecodeResult = { ok: true; value: Accepted } | { ok: false; error: Rejection };

/** A stable string for a packet's origin, unique per Kafka record or HTTP packet. */
export function sourceKey(s: PacketSource): string {
  return s.kind === 'kafka' ? `kafka:${s.topic}/${s.partition}@${s.offset}` : `http:${s.requestId}#${s.index}`;
}

/** Builds the quarantine row of a rejected packet (`raw` left empty when the caller writes the bytes itself). */
export function quarantineRow(p: RawPacket, r: Rejection, withRaw = true): QuarantineRow {
  const s = p.source;
  return {
    source_key: sourceKey(s),
    source_kind: s.kind,
    topic: s.kind === 'kafka' ? s.topic : '',
    partition: s.kind === 'kafka' ? s.partition : -1,
    offset: s.kind === 'kafka' ? s.offset : '-1',
    request_id: s.kind === 'http' ? s.requestId : (p.requestId ?? ''),
    packet_type: r.packetType ?? '',
    reason_code: r.code,
    reason: r.message,
    ids: r.ids,
    raw: withRaw ? p.raw : '',
    raw_encoding: p.encoding ?? 'utf8',
  };
}

/** The `quarantine_replays` row of a replayed packet's outcome (undefined for a packet that is no replay). */
export function replayRow(p: RawPacket, o: PacketOutcome): ReplayRow | undefined {
  const t = p.replay;
  if (!t) return undefined;
  return {
    quarantine_id: t.quarantineId,
    replay_id: t.replayId,
    key_id: t.keyId,
    corrected: t.corrected,
    outcome: o.status,
    packet_type: o.packetType ?? '',
    ids: o.ids,
    reason_code: o.reason?.code ?? '',
    reason: o.reason?.message ?? '',
    source: sourceKey(p.source),
  };
}

/** The packet type that lands in each kind of accepted row. */
export const KIND_PACKET_TYPE: Record<Accepted['kind'], PacketType> = {
  invocation: 'tool_call',
  output: 'output_artifact',
  dependency: 'tool_dependency',
  hint: 'optimization_hint',
  turn: 'model_turn',
  run: 'agent_run',
};

/** The ids an accepted packet is known by (answers, quarantine, logs). */
export function acceptedIds(a: Accepted): string[] {
  if (a.kind === 'invocation') return [a.row.call_id];
  if (a.kind === 'output') return [a.row.output_id, a.row.call_id];
  if (a.kind === 'hint') return [a.row.hint_id];
  if (a.kind === 'turn') return [a.row.turn_id];
  if (a.kind === 'run') return [a.row.run_id];
  return [a.row.preceding_call_id, a.row.succeeding_call_id];
}
