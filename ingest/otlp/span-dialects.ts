/**
 * Which spans are tool calls, and where each dialect of span attributes keeps a call's tool, its
 * id, its arguments and its result. Pure: reads a span's own attributes only.
 *
 * | dialect (whose conventions) | a tool span is | tool | call id | arguments | result |
 * |---|---|---|---|---|---|
 * | OTel GenAI semantic conventions (gen_ai.*, 1.37) | `gen_ai.operation.name = execute_tool` | `gen_ai.tool.name` | `gen_ai.tool.call.id` | `gen_ai.tool.call.arguments` | `gen_ai.tool.call.result` |
 * | Vercel AI SDK (ai.*) | name or `ai.operationId` `ai.toolCall` | `ai.toolCall.name` | `ai.toolCall.id` | `.args` / `.input` | `.result` / `.output` |
 * | OpenInference (Arize Phoenix: LangChain, LlamaIndex, CrewAI, smolagents, DSPy …) | `openinference.span.kind = TOOL` | `tool.name`, `tool_call.function.name`, the span name | `tool_call.id` | `input.value` (JSON; plain text as `{"input": …}`), `tool_call.function.arguments` | `output.value` |
 * | OTel MCP semantic conventions (mcp.*, 1.37; the MCP SDKs' own spans) | `mcp.method.name = tools/call` (any other MCP method is not a call) | `gen_ai.tool.name`, else the span name's target (`tools/call <tool>`) | `gen_ai.tool.call.id` | `gen_ai.tool.call.arguments` | `gen_ai.tool.call.result` |
 * | OpenLLMetry (Traceloop: its LangChain, CrewAI, LlamaIndex, MCP instrumentations; read before gen_ai.*, which they fill with their envelope) | `traceloop.span.kind = tool` | `traceloop.entity.input`'s `tool_name`, `traceloop.entity.name`, the span name | `gen_ai.tool.call.id` | `traceloop.entity.input`: its `arguments` (MCP), `inputs` (LangChain), `kwargs` (decorators), else itself | `traceloop.entity.output` (its `output` when an envelope) |
 */
import { parseLossless } from '../../schemas/lossless-json.ts';
import { stringifyLossless } from '../../schemas/raw-json.ts';
import type { JsonValue } from '../../schemas/canonical-json.ts';
import type { AttrValue, OtlpSpan } from './otlp-decode.ts';

/** The tool fields of a recognised span. */
export interface ToolFields {
  tool: AttrValue | undefined;
  toolCallId: AttrValue | undefined;
  args: AttrValue | undefined;
  result: AttrValue | undefined;
  /** An MCP tools/call span: which side of the call it records, with the request's ids. */
  mcp?: McpCall;
}

/**
 * An MCP tools/call span's side and ids. The client and the server each record one call: the
 * client's span (kind CLIENT) and the server's (kind SERVER, the child of the client's when the
 * client propagated its trace context in `_meta`).
 */
export interface McpCall {
  side: 'client' | 'server';
  requestId?: string;
  sessionId?: string;
}

/** SpanKind SERVER in OTLP. */
const SPAN_KIND_SERVER = 2;

/**
 * The attributes {@link toolFields} recognises a tool span by, and the span-name prefix (the AI
 * SDK's `ai.toolCall`): a span with none of them is no tool span, so decoding may skip it.
 */
export const TOOL_SPAN_MARKERS = { keys: ['traceloop.span.kind', 'mcp.method.name', 'openinference.span.kind', 'gen_ai.operation.name', 'ai.operationId'], namePrefixes: ['ai.'] } as const;

/** Reads the tool fields of a recognised span, or undefined for any other span. */
export function toolFields(span: OtlpSpan): ToolFields | undefined {
  const a = span.attributes;
  // OpenLLMetry first: its instrumentations set gen_ai.* too, with the whole entity envelope
  // (input_str, tags, metadata, inputs, kwargs) as gen_ai.tool.call.arguments.
  if (a['traceloop.span.kind'] === 'tool') {
    const input = jsonObject(a['traceloop.entity.input']);
    const named = input?.tool_name;
    return {
      tool: (typeof named === 'string' ? named : undefined) ?? a['traceloop.entity.name'] ?? a['gen_ai.tool.name'] ?? span.name,
      toolCallId: a['gen_ai.tool.call.id'],
      args: input ? traceloopArgs(input) : objectOrInput(a['traceloop.entity.input']),
      result: traceloopOutput(a['traceloop.entity.output']),
    };
  }
  // MCP before GenAI: the conventions have its server spans say execute_tool too.
  const method = a['mcp.method.name'];
  if (method !== undefined) return method === 'tools/call' ? mcpFields(span) : undefined;
  if (a['openinference.span.kind'] === 'TOOL') {
    return {
      tool: a['tool.name'] ?? a['tool_call.function.name'] ?? span.name,
      toolCallId: a['tool_call.id'],
      args: a['input.value'] !== undefined ? objectOrInput(a['input.value']) : a['tool_call.function.arguments'],
      result: a['output.value'],
    };
  }
  if (a['gen_ai.operation.name'] === 'execute_tool') {
    return { tool: a['gen_ai.tool.name'], toolCallId: a['gen_ai.tool.call.id'], args: a['gen_ai.tool.call.arguments'], result: a['gen_ai.tool.call.result'] };
  }
  if (span.name === 'ai.toolCall' || a['ai.operationId'] === 'ai.toolCall') {
    return {
      tool: a['ai.toolCall.name'],
      toolCallId: a['ai.toolCall.id'],
      args: a['ai.toolCall.args'] ?? a['ai.toolCall.input'],
      result: a['ai.toolCall.result'] ?? a['ai.toolCall.output'],
    };
  }
  return undefined;
}

/** An OpenLLMetry entity output: its `output` when it is an envelope of one ({"output", "kwargs"}), else itself. */
function traceloopOutput(v: AttrValue | undefined): AttrValue | undefined {
  const o = jsonObject(v);
  if (!o || !('output' in o)) return v;
  const out = o.output;
  return typeof out === 'string' ? out : stringifyLossless(out as JsonValue);
}

type JsonObject = { [k: string]: JsonValue };
const isObject = (v: JsonValue | undefined): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A JSON object held in an attribute as text (its number literals kept), or undefined. */
function jsonObject(v: AttrValue | undefined): JsonObject | undefined {
  if (typeof v !== 'string' || !v.trimStart().startsWith('{')) return undefined;
  const parsed = parseLossless(v);
  return isObject(parsed) ? parsed : undefined;
}

/** Arguments as JSON object text: the attribute itself when it holds one, else `{"input": <its value>}`. */
function objectOrInput(v: AttrValue | undefined): AttrValue | undefined {
  if (v === undefined || v === null) return v;
  if (jsonObject(v)) return v;
  if (typeof v === 'object' && !Array.isArray(v)) return v;
  return stringifyLossless({ input: (typeof v === 'string' ? (parseLossless(v) ?? v) : v) as JsonValue });
}

/** The arguments in an OpenLLMetry entity input: MCP's `arguments`, LangChain's `inputs`, a decorator's `kwargs` (and `args`). */
function traceloopArgs(input: JsonObject): string {
  if (isObject(input.arguments)) return stringifyLossless(input.arguments);
  if ('inputs' in input) return stringifyLossless(isObject(input.inputs) ? input.inputs : { input: input.inputs as JsonValue });
  if (isObject(input.kwargs)) {
    const positional: JsonObject = Array.isArray(input.args) && input.args.length > 0 ? { args: input.args } : {};
    return stringifyLossless({ ...positional, ...input.kwargs });
  }
  return stringifyLossless(input);
}

/** The tool fields of an MCP tools/call span (OTel MCP conventions). */
function mcpFields(span: OtlpSpan): ToolFields {
  const a = span.attributes;
  const text = (v: AttrValue | undefined) => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);
  // The conventions name the span `tools/call <tool>`; the Python SDK's client `MCP send tools/call <tool>`.
  const target = /tools\/call (.+)$/.exec(span.name)?.[1];
  const requestId = text(a['jsonrpc.request.id']);
  const sessionId = text(a['mcp.session.id']);
  return {
    tool: a['gen_ai.tool.name'] ?? target,
    toolCallId: a['gen_ai.tool.call.id'],
    args: a['gen_ai.tool.call.arguments'],
    result: a['gen_ai.tool.call.result'],
    mcp: { side: span.kind === SPAN_KIND_SERVER ? 'server' : 'client', ...(requestId ? { requestId } : {}), ...(sessionId ? { sessionId } : {}) },
  };
}

/**
 * Whether an MCP tools/call span is the call, so that the two spans of one call store one call.
 * With `client` (the default) the client's span is the call, and a server's span only when it
 * continues no trace (the client was not instrumented, or did not propagate its context): a
 * server span with a parent belongs to a call whose client span is the record. With `server`
 * the server's span is the call and the client's is never stored.
 */
export function isMcpCall(span: Pick<OtlpSpan, 'parentSpanId'>, call: McpCall, side: 'client' | 'server'): boolean {
  if (side === 'server') return call.side === 'server';
  return call.side === 'client' || span.parentSpanId === undefined;
}
