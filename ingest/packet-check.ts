/**
 * A hand-written fast path for the packet schemas (schemas/packets.ts): true only for a
 * value the zod schema accepts unchanged, so the decoder can use the parsed JSON as the packet
 * and skip zod. Anything else (including every invalid packet) returns false and goes through
 * zod, which stays the single source of truth for what is valid and for the rejection message.
 *
 * One-directional by construction: a false here never rejects anything, it only costs a zod
 * run. test/unit/ingest/packet-check.test.ts checks the direction on generated and mutated packets.
 * The patterns are taken from the zod schemas themselves, not copied.
 */
import { sha256HexSchema, timestampSchema, uuidSchema } from '../schemas/common.ts';
import { contentTypeSchema, toolOutputSchema } from '../schemas/tool-output.ts';
import { orchestratorSchema, statusSchema, toolInvocationSchema } from '../schemas/tool-invocation.ts';
import { toolDependencySchema } from '../schemas/tool-dependency.ts';
import { modelTurnSchema, requestedToolCallSchema } from '../schemas/model-turn.ts';
import { MAX_MESSAGES } from '../schemas/vocabulary.ts';
import { agentRunSchema } from '../schemas/agent-run.ts';
import { agentRunPacketSchema, modelTurnPacketSchema, outputArtifactPacketSchema, toolCallPacketSchema, toolDependencyPacketSchema } from '../schemas/packets.ts';
import type { Packet } from '../schemas/packets.ts';

/** The pattern zod checks a string schema against (its regex check or its string format). */
function patternOf(schema: unknown): RegExp | undefined {
  const zod = (schema as { _zod?: { def?: { pattern?: unknown; checks?: Array<{ _zod?: { def?: { pattern?: unknown } } }> } } })._zod;
  const own = zod?.def?.pattern;
  const found = own instanceof RegExp ? [own] : (zod?.def?.checks?.map((c) => c._zod?.def?.pattern).filter((p): p is RegExp => p instanceof RegExp) ?? []);
  // A stateful (global or sticky) pattern would need lastIndex resets; zod's are not.
  return found.length === 1 && !found[0]?.global && !found[0]?.sticky ? found[0] : undefined;
}

const UUID = patternOf(uuidSchema);
const SHA256 = patternOf(sha256HexSchema);
const TIMESTAMP = patternOf(timestampSchema);
// timestampSchema's refine (common.ts): a real date in [1970-01-01, 2200-01-01).
const MAX_TS = Date.UTC(2200, 0, 1);
/** False when the zod internals the patterns come from have moved: then zod judges everything. */
const ENABLED = UUID !== undefined && SHA256 !== undefined && TIMESTAMP !== undefined;

const ORCHESTRATORS: ReadonlySet<unknown> = new Set(orchestratorSchema.options);
const STATUSES: ReadonlySet<unknown> = new Set(statusSchema.options);
const CONTENT_TYPES: ReadonlySet<unknown> = new Set(contentTypeSchema.options);

// Allowed keys come from the zod contracts themselves, so the fast path cannot drift from them.
const keysOf = (schema: { shape: object }): ReadonlySet<string> => new Set(Object.keys(schema.shape));
const TOOL_CALL_KEYS = keysOf(toolCallPacketSchema);
const INVOCATION_KEYS = keysOf(toolInvocationSchema);
const OUTPUT_PACKET_KEYS = keysOf(outputArtifactPacketSchema);
const OUTPUT_KEYS = keysOf(toolOutputSchema);
const DEPENDENCY_PACKET_KEYS = keysOf(toolDependencyPacketSchema);
const DEPENDENCY_KEYS = keysOf(toolDependencySchema);
const TURN_PACKET_KEYS = keysOf(modelTurnPacketSchema);
const TURN_KEYS = keysOf(modelTurnSchema);
const REQUESTED_KEYS = keysOf(requestedToolCallSchema);
const TRACE_ID = patternOf(modelTurnSchema.shape.trace_id.unwrap());
const SPAN_ID = patternOf(modelTurnSchema.shape.span_id.unwrap());
const TURN_STATUSES: ReadonlySet<unknown> = new Set(modelTurnSchema.shape.status.options);
const COST_SOURCES: ReadonlySet<unknown> = new Set([null, ...modelTurnSchema.shape.cost_source.unwrap().options]);
const RUN_PACKET_KEYS = keysOf(agentRunPacketSchema);
const RUN_KEYS = keysOf(agentRunSchema);
const RUN_TRACE_ID = patternOf(agentRunSchema.shape.trace_id.unwrap());
const RUN_SPAN_ID = patternOf(agentRunSchema.shape.span_id.unwrap());
const RUN_PARENT_ID = patternOf(agentRunSchema.shape.parent_span_id.unwrap());
const RUN_STATUSES: ReadonlySet<unknown> = new Set(agentRunSchema.shape.status.options);

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Only the keys of a strict object (an absent optional key reads as undefined below). */
function onlyKeys(o: Obj, allowed: ReadonlySet<string>): boolean {
  for (const k in o) if (!allowed.has(k)) return false;
  return true;
}
/** z.record(z.string(), …) returns a copy without `__proto__`; the fast path only takes objects it would copy exactly. */
const isRecord = (v: unknown): v is Obj => isObject(v) && !Object.hasOwn(v, '__proto__');
const isName = (v: unknown): boolean => typeof v === 'string' && v.length >= 1 && v.length <= 256;
const isUuid = (v: unknown): boolean => typeof v === 'string' && v.length === 36 && (UUID as RegExp).test(v);
const isSha256 = (v: unknown): boolean => typeof v === 'string' && v.length === 64 && (SHA256 as RegExp).test(v);
const isOptionalText = (v: unknown, max: number): boolean => v === undefined || v === null || (typeof v === 'string' && v.length <= max);
function isTimestamp(v: unknown): boolean {
  if (typeof v !== 'string' || !(TIMESTAMP as RegExp).test(v)) return false;
  const ms = Date.parse(v);
  return ms >= 0 && ms < MAX_TS;
}
const isNonNegativeInt = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;

function isTokens(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (!isRecord(v)) return false;
  for (const k in v) if (!isNonNegativeInt(v[k])) return false;
  return true;
}

function isInvocation(v: unknown): boolean {
  return (
    isObject(v) &&
    onlyKeys(v, INVOCATION_KEYS) &&
    isUuid(v.call_id) &&
    (v.task_id === undefined || v.task_id === null || isName(v.task_id)) &&
    isName(v.tool_id) &&
    isName(v.agent_id) &&
    ORCHESTRATORS.has(v.orchestrator) &&
    (v.instance_id === undefined || isName(v.instance_id)) &&
    isRecord(v.args) &&
    isSha256(v.args_hash) &&
    STATUSES.has(v.status) &&
    isNonNegativeInt(v.duration_ms) &&
    isRecord(v.result_summary) &&
    isOptionalText(v.error, 65_536) &&
    (v.cost_usd === undefined || v.cost_usd === null || (typeof v.cost_usd === 'number' && Number.isFinite(v.cost_usd) && v.cost_usd >= 0)) &&
    isTokens(v.tokens_used) &&
    isTimestamp(v.created_at) &&
    // Approvals are rare: zod judges a call that carries one.
    (v.approval === undefined || v.approval === null)
  );
}

function isOutput(v: unknown): boolean {
  return (
    isObject(v) &&
    onlyKeys(v, OUTPUT_KEYS) &&
    isUuid(v.output_id) &&
    isUuid(v.call_id) &&
    isName(v.tool_id) &&
    CONTENT_TYPES.has(v.content_type) &&
    isSha256(v.content_hash) &&
    Number.isSafeInteger(v.size_bytes) &&
    (v.size_bytes as number) > 0 &&
    (v.sample === undefined || v.sample === null || typeof v.sample === 'string') &&
    isTimestamp(v.created_at)
  );
}

function isDependency(v: unknown): boolean {
  return (
    isObject(v) &&
    onlyKeys(v, DEPENDENCY_KEYS) &&
    isName(v.task_id) &&
    isUuid(v.preceding_call_id) &&
    isUuid(v.succeeding_call_id) &&
    isName(v.preceding_tool_id) &&
    isName(v.succeeding_tool_id) &&
    Number.isSafeInteger(v.time_delta_ms) &&
    isOptionalText(v.data_flow, 65_536)
  );
}

const isCount = (v: unknown): boolean => v === null || isNonNegativeInt(v);
const isOptionalName = (v: unknown): boolean => v === null || isName(v);
const matches = (v: unknown, p: RegExp | undefined): boolean => v === null || (p !== undefined && typeof v === 'string' && p.test(v));

/** Every field of a turn but its messages is required (nullable, never optional): an absent one is zod's to report. */
function isTurn(v: unknown): boolean {
  if (!isObject(v) || !onlyKeys(v, TURN_KEYS)) return false;
  for (const k of TURN_KEYS) if (!(k in v) && k !== 'messages') return false;
  const asked = v.requested_tool_calls;
  return (
    isUuid(v.turn_id) &&
    isName(v.task_id) &&
    isName(v.agent_id) &&
    isName(v.model) &&
    isOptionalName(v.provider) &&
    isCount(v.input_tokens) &&
    isCount(v.output_tokens) &&
    isCount(v.cached_input_tokens) &&
    (v.cost_usd === null || (typeof v.cost_usd === 'number' && Number.isFinite(v.cost_usd) && v.cost_usd >= 0)) &&
    COST_SOURCES.has(v.cost_source) &&
    isNonNegativeInt(v.duration_ms) &&
    TURN_STATUSES.has(v.status) &&
    (v.error === null || (typeof v.error === 'string' && v.error.length <= 65_536)) &&
    Array.isArray(asked) &&
    asked.length <= 256 &&
    asked.every((q) => isObject(q) && onlyKeys(q, REQUESTED_KEYS) && 'id' in q && isOptionalName(q.id) && isName(q.tool_id)) &&
    matches(v.trace_id, TRACE_ID) &&
    matches(v.span_id, SPAN_ID) &&
    isTimestamp(v.created_at) &&
    isOptionalText(v.messages, MAX_MESSAGES)
  );
}

/** Every field of a run is required (nullable, never optional), as of a turn. */
function isRun(v: unknown): boolean {
  if (!isObject(v) || !onlyKeys(v, RUN_KEYS)) return false;
  for (const k of RUN_KEYS) if (!(k in v)) return false;
  return (
    isUuid(v.run_id) &&
    isName(v.task_id) &&
    isName(v.agent_id) &&
    isName(v.name) &&
    isNonNegativeInt(v.duration_ms) &&
    RUN_STATUSES.has(v.status) &&
    (v.error === null || (typeof v.error === 'string' && v.error.length <= 65_536)) &&
    matches(v.trace_id, RUN_TRACE_ID) &&
    matches(v.span_id, RUN_SPAN_ID) &&
    matches(v.parent_span_id, RUN_PARENT_ID) &&
    isTimestamp(v.created_at)
  );
}

/**
 * True when `packetSchema.parse(json)` would succeed and return a value equal to json (so json
 * can be used as the parsed packet); false when unsure.
 */
export function isValidPacket(json: unknown): json is Packet {
  if (!ENABLED || !isObject(json)) return false;
  switch (json.type) {
    case 'tool_call':
      return onlyKeys(json, TOOL_CALL_KEYS) && isUuid(json.call_id) && isInvocation(json.invocation);
    case 'output_artifact': {
      const c = json.content;
      return onlyKeys(json, OUTPUT_PACKET_KEYS) && isOutput(json.output) && (typeof c === 'string' || Array.isArray(c) || isRecord(c));
    }
    case 'tool_dependency':
      return onlyKeys(json, DEPENDENCY_PACKET_KEYS) && isDependency(json.dependency);
    case 'model_turn':
      return onlyKeys(json, TURN_PACKET_KEYS) && isTurn(json.turn);
    case 'agent_run':
      return onlyKeys(json, RUN_PACKET_KEYS) && isRun(json.run);
    default:
      return false;
  }
}

/** Whether the fast path is active (the zod patterns were found); for tests. */
export const packetCheckEnabled = ENABLED;
