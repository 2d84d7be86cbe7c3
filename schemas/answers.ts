/**
 * Zod contracts of the read API's answers (SPEC §5). The query functions return these types,
 * the OpenAPI document is generated from them, and the tests check every answer against them.
 */
import { z } from 'zod';
import { isJsonObjectLike, type RawJson } from './raw-json.ts';
import { contentTypeSchema } from './tool-output.ts';
import { orchestratorSchema, statusSchema } from './tool-invocation.ts';
import { HINT_KINDS } from './optimization-hint.ts';
import { manifestEntrySchema } from './tool-manifest.ts';

export const iso = z.string().describe('ISO-8601 UTC timestamp with millisecond precision and Z');
const counts = z.record(z.string(), z.number().int());
/**
 * A JSON object the API serves exactly as stored ({@link RawJson} on the server, spliced verbatim
 * into the answer; a plain object once a JSON client parsed it), so numbers keep the literal the
 * producer wrote.
 */
const storedObject = (what: string, values: Record<string, unknown> = {}) =>
  z
    .custom<RawJson | Record<string, unknown>>(isJsonObjectLike, { message: 'expected a JSON object' })
    .meta({ type: 'object', additionalProperties: values, description: `${what}, exactly as stored (numbers as the producer wrote them)` });
export const nextCursor = z.string().nullable().describe('pass as ?cursor= for the next page; null on the last page');

/** One tool call as the API returns it, with the derived `success` and `expensive`. */
export const invocationSchema = z.strictObject({
  call_id: z.string(),
  task_id: z.string().nullable(),
  tool_id: z.string(),
  agent_id: z.string(),
  orchestrator: orchestratorSchema,
  instance_id: z.string(),
  args: storedObject('the canonical args of SPEC §2: sha256(json.dumps(args, sort_keys=True)) == args_hash'),
  args_hash: z.string(),
  status: statusSchema,
  success: z.boolean().describe("status == 'success'"),
  duration_ms: z.number().int(),
  result_summary: storedObject('the result summary'),
  error: z.string().nullable(),
  error_category: z
    .string()
    .nullable()
    .describe("a failed call's error category (tool-smith's envelope: validation_error, auth_error, not_found, rate_limit, timeout, server_error, or the tool's own), from its result_summary; null for a success or when none was reported"),
  cost_usd: z.number().nullable(),
  expensive: z.boolean().describe('cost_usd > the configured threshold (default 1.0)'),
  tokens_used: storedObject('token counts', { type: 'integer', minimum: 0 }).nullable(),
  created_at: iso,
  approval: z
    .strictObject({ approved_by: z.string(), approved_at: iso, reference: z.string().optional() })
    .nullable()
    .optional()
    .describe('the human approval the call ran under (null: none); in the task view, where M9 findings are read beside it'),
  redactions: z
    .array(z.strictObject({ pointer: z.string().describe('JSON Pointer into the call: /args…, /result_summary…, /error'), rule: z.string().describe('the detector (aws_access_key, bearer_token, …), path for a configured path, or a custom rule') }))
    .optional()
    .describe('where secrets were replaced by placeholders [redacted:<rule>:<16 hex>] before the call was stored (empty: none); in the task view'),
});
export type Invocation = z.infer<typeof invocationSchema>;

/** Output metadata (the content itself is not returned; `sample` is its first 500 characters). */
export const outputSchema = z.strictObject({
  output_id: z.string(),
  call_id: z.string(),
  tool_id: z.string(),
  content_type: contentTypeSchema,
  content_hash: z.string(),
  size_bytes: z.number().int(),
  sample: z.string().nullable(),
  created_at: iso,
});
export type Output = z.infer<typeof outputSchema>;

/** A tool_workflows row. */
export const dependencySchema = z.strictObject({
  task_id: z.string(),
  preceding_call_id: z.string(),
  succeeding_call_id: z.string(),
  preceding_tool_id: z.string(),
  succeeding_tool_id: z.string(),
  time_delta_ms: z.number().int(),
  data_flow: z.string().nullable(),
  origin: z.enum(['emitted', 'analyzer']),
});
export type Dependency = z.infer<typeof dependencySchema>;

export const toolStatsSchema = z.strictObject({
  tool_id: z.string(),
  invocations: z.number().int(),
  success_rate: z.number().nullable().describe('successes / invocations; null without invocations'),
  avg_duration_ms: z.number().nullable(),
  p95_duration_ms: z.number().nullable().describe('95th percentile, linear interpolation between closest ranks (numpy default, PERCENTILE.INC)'),
  total_cost_usd: z.number().describe('sum of the non-null cost_usd'),
  error_distribution: counts.describe('error message → calls, most frequent first (at most `limit` messages)'),
});
export type ToolStats = z.infer<typeof toolStatsSchema>;

export const toolsSummarySchema = z.strictObject({
  tools: z
    .array(
      z.strictObject({
        tool_id: z.string(),
        server: z.string().describe("the MCP server the tool came from (the current manifest's mcp.server); '' for tools not from MCP"),
        invocations: z.number().int(),
        success_rate: z.number(),
        avg_duration_ms: z.number(),
        p95_duration_ms: z.number(),
        total_cost_usd: z.number(),
      }),
    )
    .describe('most invoked first'),
});
export type ToolsSummary = z.infer<typeof toolsSummarySchema>;

export const invocationListSchema = z.strictObject({ invocations: z.array(invocationSchema), next_cursor: nextCursor });
export type InvocationList = z.infer<typeof invocationListSchema>;

export const agentToolsSchema = z.strictObject({
  agent_id: z.string(),
  tool_frequency: counts.describe('tool_id → calls of the agent in the window, most frequent first'),
  tool_sequence: z.array(z.string()).describe('tool_id of each returned invocation, oldest first (call order)'),
  invocations: z.array(invocationSchema).describe('newest first'),
  next_cursor: nextCursor,
});
export type AgentTools = z.infer<typeof agentToolsSchema>;

export const dagNodeSchema = z.strictObject({
  id: z.string().describe('call_id'),
  tool_id: z.string(),
  status: statusSchema,
  created_at: iso,
  duration_ms: z.number().int(),
  cost_usd: z.number().nullable(),
});
export const dagEdgeSchema = z.strictObject({
  from: z.string().describe('preceding call_id'),
  to: z.string().describe('succeeding call_id'),
  time_delta_ms: z.number().int(),
  data_flow: z.string().nullable(),
});
/** A model turn as served. */
export const modelTurnViewSchema = z.strictObject({
  turn_id: z.string(),
  agent_id: z.string(),
  model: z.string(),
  provider: z.string().nullable(),
  input_tokens: z.number().int().nullable(),
  output_tokens: z.number().int().nullable(),
  cached_input_tokens: z.number().int().nullable(),
  cost_usd: z.number().nullable(),
  cost_source: z.enum(['reported', 'price_table']).nullable().describe("reported by the producer, or from tool-audit's price table"),
  duration_ms: z.number().int(),
  status: z.enum(['success', 'error']),
  error: z.string().nullable(),
  requested_tool_calls: z
    .array(z.strictObject({ id: z.string().nullable(), tool_id: z.string(), call_id: z.string().nullable().describe('the call of this page that answered the request; null when none did (yet)') }))
    .describe('the tool calls the model asked for, in its order'),
  trace_id: z.string().nullable(),
  span_id: z.string().nullable(),
  created_at: z.string().describe('when the answer was complete'),
  messages: z.string().nullable().describe("the turn's message attributes as JSON text (redacted), when the deployment stores them (OTLP_TURN_MESSAGES=on); else null"),
});
/** A model turn as served. */
export type ModelTurnView = z.infer<typeof modelTurnViewSchema>;

const turnSums = {
  turns: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cached_input_tokens: z.number().int().describe('of input_tokens, read from the provider\'s prompt cache'),
  cost_usd: z.number().describe('model cost: reported by the producer, else priced from the table; turns without either count 0'),
  unpriced_turns: z.number().int().describe('turns whose cost is not known (a model the price table does not list, or no token counts)'),
};
/** GET /v1/cost/models. */
export const modelCostSchema = z.strictObject({
  models: z.array(z.strictObject({ model: z.string(), provider: z.string().nullable(), ...turnSums })).describe('per model and provider, most costly first'),
  agents: z
    .array(z.strictObject({ agent_id: z.string(), ...turnSums, tool_calls: z.number().int(), tool_cost_usd: z.number() }))
    .describe('per agent: its model turns and, beside them, its tool calls and their cost; by model + tool cost, most costly first'),
  totals: z.strictObject({
    turns: z.number().int(),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    cached_input_tokens: z.number().int(),
    model_cost_usd: z.number(),
    unpriced_turns: z.number().int(),
    tool_calls: z.number().int(),
    tool_cost_usd: z.number(),
  }).describe('of the models and agents listed'),
});
export type ModelCost = z.infer<typeof modelCostSchema>;

/** An agent run as served. */
export const agentRunViewSchema = z.strictObject({
  run_id: z.string(),
  agent_id: z.string(),
  name: z.string(),
  started_at: iso.describe('created_at − duration_ms'),
  duration_ms: z.number().int(),
  status: z.enum(['success', 'error']),
  error: z.string().nullable(),
  trace_id: z.string().nullable(),
  span_id: z.string().nullable(),
  parent_span_id: z.string().nullable().describe('the span the run was started under; null at a trace root'),
  created_at: iso.describe('when the run ended'),
});
/** An agent run as served. */
export type AgentRunView = z.infer<typeof agentRunViewSchema>;

export const taskViewSchema = z.strictObject({
  task_id: z.string(),
  name: z.string().nullable().describe("the task's name: its outermost agent run's (the first to start; of those, the longest); null when no run is stored"),
  agent_id: z.string().nullable().describe('the agent of that run'),
  invocations: z.array(invocationSchema).describe('call order: created_at, then call_id'),
  dependencies: z.array(dependencySchema).describe('dependencies touching the returned invocations'),
  outputs: z.array(outputSchema).describe('outputs of the returned invocations'),
  workflow_dag: z.strictObject({ nodes: z.array(dagNodeSchema), edges: z.array(dagEdgeSchema) }),
  model_turns: z.array(modelTurnViewSchema).describe("the task's model turns completed in the span of this page's calls (the first page from the window's start, the last to its end), oldest first"),
  agent_runs: z.array(agentRunViewSchema).describe("the task's agent runs, whatever the page (1,000 at most), in the order they started"),
  next_cursor: nextCursor,
});
export type TaskView = z.infer<typeof taskViewSchema>;

export const expensiveSchema = z.strictObject({
  threshold_usd: z.number(),
  invocations: z.array(invocationSchema).describe('cost_usd descending, then call_id'),
  count: z.number().int().describe('calls above the threshold in the window'),
  total_cost_usd: z.number().describe('their total cost'),
  next_cursor: nextCursor,
});
export type Expensive = z.infer<typeof expensiveSchema>;

export const slowSchema = z.strictObject({
  threshold_ms: z.number().int(),
  invocations: z.array(invocationSchema).describe('duration_ms descending, then call_id'),
  count: z.number().int().describe('calls above the threshold in the window'),
  next_cursor: nextCursor,
});
export type Slow = z.infer<typeof slowSchema>;

export const failedSchema = z.strictObject({
  errors: z.array(invocationSchema).describe("calls with status != 'success', newest first"),
  count: z.number().int(),
  error_distribution: counts.describe('status → failed calls'),
  category_distribution: counts.describe("error_category → failed calls, most frequent first ('(none)': no category reported)"),
  frequent_errors: counts.describe('error message → calls, most frequent first (at most 100)'),
  next_cursor: nextCursor,
});
export type Failed = z.infer<typeof failedSchema>;

export const dedupGroupSchema = z.strictObject({
  tool_id: z.string(),
  args_hash: z.string(),
  count: z.number().int(),
  potential_savings_ms: z.number().describe('duration of the repeats: sum minus the first call'),
  potential_savings_usd: z.number().describe('cost of the repeats: sum minus the first call (null cost = 0)'),
  first_seen: iso,
  last_seen: iso,
});
export const dedupSchema = z.strictObject({
  groups: z.array(dedupGroupSchema).describe('count descending, then potential_savings_ms descending, then args_hash'),
  totals: z.strictObject({
    groups: z.number().int(),
    duplicate_calls: z.number().int().describe('calls beyond the first of each group'),
    potential_savings_ms: z.number(),
    potential_savings_usd: z.number(),
  }),
  next_cursor: nextCursor,
});
export type Dedup = z.infer<typeof dedupSchema>;

export const identicalOutputsSchema = z.strictObject({
  groups: z.array(
    z.strictObject({
      content_hash: z.string(),
      tool_id: z.string(),
      count: z.number().int(),
      call_ids: z.array(z.string()).describe('oldest first, at most 1000'),
    }),
  ),
  next_cursor: nextCursor,
});
export type IdenticalOutputs = z.infer<typeof identicalOutputsSchema>;

export const toolOutputsSchema = z.strictObject({
  tool_id: z.string(),
  outputs: z.array(
    z.strictObject({
      content_hash: z.string(),
      content_type: contentTypeSchema,
      size_bytes: z.number().int(),
      sample: z.string().nullable(),
      count: z.number().int().describe('outputs with this content'),
      first_seen: iso,
      last_seen: iso,
    }),
  ).describe('one per content_hash, most recently seen first'),
  next_cursor: nextCursor,
});
export type ToolOutputs = z.infer<typeof toolOutputsSchema>;

export const sequencesSchema = z.strictObject({
  length: z.number().int(),
  sequences: z.array(z.strictObject({ tools: z.array(z.string()), count: z.number().int() })).describe('count descending, then tools'),
  next_cursor: nextCursor,
});
export type Sequences = z.infer<typeof sequencesSchema>;

export const violationsSchema = z.strictObject({
  violations: z.array(
    z.strictObject({
      invariant: z.string(),
      packet_type: z.string(),
      ids: z.array(z.string()),
      detail: z.string(),
      detected_at: iso,
      task_id: z.string().nullable().describe('the task of the first of ids that is a stored call (null: none is, or that call has no task) — where the pages link'),
    }),
  ),
  counts: counts.describe('invariant → violations in the window'),
  next_cursor: nextCursor,
});
export type Violations = z.infer<typeof violationsSchema>;

export const taskListSchema = z.strictObject({
  tasks: z
    .array(
      z.strictObject({
        task_id: z.string(),
        name: z.string().nullable().describe("the task's name, as in the task view; null when no agent run of it is stored"),
        calls: z.number().int(),
        failures: z.number().int().describe("calls with status != 'success'"),
        total_cost_usd: z.number().describe("the calls' cost (a null cost as 0)"),
        model_turns: z.number().int().describe('model turns of the task in the window'),
        model_input_tokens: z.number().int(),
        model_output_tokens: z.number().int(),
        model_cost_usd: z.number().describe("the turns' cost (a turn without a cost as 0)"),
        agents: z.array(z.string()),
        first_call: iso,
        last_call: iso,
      }),
    )
    .describe('last call descending, then task_id'),
});
export type TaskList = z.infer<typeof taskListSchema>;

export const toolSeriesSchema = z.strictObject({
  bucket_s: z.number().int(),
  series: z
    .array(
      z.strictObject({
        tool_id: z.string(),
        points: z.array(z.strictObject({ time: iso.describe('start of the bucket'), calls: z.number().int(), cost_usd: z.number() })).describe('buckets with calls, oldest first'),
      }),
    )
    .describe('one per tool with calls in the window, by tool_id'),
});
export type ToolSeries = z.infer<typeof toolSeriesSchema>;

/** What GET /v1/outputs/{output_id}/content answers. */
export const outputContentSchema = z.strictObject({
  output_id: z.string(),
  call_id: z.string(),
  tool_id: z.string(),
  content_type: contentTypeSchema,
  content_hash: z.string(),
  size_bytes: z.number().int().describe('UTF-8 bytes of the whole content'),
  created_at: z.string(),
  content: z.string().describe('the content as stored (JSON text for content_type json), at most max_bytes bytes of UTF-8, cut at a code point'),
  truncated: z.boolean().describe('true when content is a prefix of the stored content'),
});
/** The answer of GET /v1/outputs/{output_id}/content (queries/output-content.ts). */
export type OutputContent = z.infer<typeof outputContentSchema>;

/** One stored hint as the API returns it. */
export const hintSchema = z.strictObject({
  hint_id: z.string(),
  kind: z.enum(HINT_KINDS),
  tool_ids: z.array(z.string()),
  task_ids_sample: z.array(z.string()),
  evidence: z.record(z.string(), z.unknown()),
  estimated_savings_ms: z.number().int(),
  estimated_savings_usd: z.number(),
  window_from: iso,
  window_to: iso,
  created_at: iso,
  origin: z.enum(['producer', 'analyzer']).describe('analyzer: the hints job; producer: an optimization_hint packet'),
});

/** GET /v1/hints. */
export const hintsListSchema = z.strictObject({ hints: z.array(hintSchema).describe('newest first'), next_cursor: nextCursor });
/** A page of hints. */
export type HintsList = z.infer<typeof hintsListSchema>;

/** GET /v1/manifests. */
export const manifestSchema = z.strictObject({
  version: z.number().int().nullable().describe('null before any manifest was applied'),
  effective_at: iso.nullable(),
  tools: z.record(z.string(), manifestEntrySchema).describe('tool_id → entry, every default applied'),
  warnings: z.array(z.string()).describe('warnings answered when this version was applied'),
  applied_by: z.string().nullable().describe("who applied this version: the API key id, 'local' (the CLI on the database), '' before that was recorded; null before any manifest"),
});
export type ManifestAnswer = z.infer<typeof manifestSchema>;

/** GET /v1/manifests/{tool_id}/history. */
export const manifestHistorySchema = z.strictObject({
  tool_id: z.string(),
  versions: z
    .array(z.strictObject({ version: z.number().int(), effective_at: iso, applied_by: z.string().describe('who applied the version'), entry: manifestEntrySchema.nullable().describe('null: the version does not declare the tool') }))
    .describe('newest first, every version since the first that declares the tool'),
});
export type ManifestHistoryAnswer = z.infer<typeof manifestHistorySchema>;

/** Pairs of (server, tool) GET /v1/mcp/servers answers at most. */
export const MAX_MCP_SERVER_TOOLS = 10_000;

const mcpToolSchema = z.strictObject({
  tool_id: z.string().describe('server/tool'),
  tool: z.string().describe("the tool's name on its server"),
  definition_hash: z.string().describe('of its latest definition'),
  first_seen: iso.describe('seen_at of the report that first listed it'),
  last_changed: iso.describe('seen_at of its latest change (added, changed or removed)'),
  versions: z.number().int().describe('definitions seen (1 + changes, counting re-adds)'),
  removed: z.boolean().describe('the latest report no longer lists it'),
});

/** GET /v1/mcp/servers. */
export const mcpServersSchema = z.strictObject({
  servers: z.array(
    z.strictObject({
      server: z.string(),
      tools: z.array(mcpToolSchema),
      definition_changes: z.number().int().describe('tool_definition_changed findings of the server'),
      last_seen: iso.describe('seen_at of the latest report that changed something (an unchanged report writes nothing)'),
    }),
  ),
  truncated: z.boolean().describe(`more than ${MAX_MCP_SERVER_TOOLS} (server, tool) pairs: the rest is left out`),
});
export type McpServers = z.infer<typeof mcpServersSchema>;

/** The fields a search looks in. */
export const SEARCH_FIELDS = ['args', 'result_summary', 'error', 'sample', 'content'] as const;
/** A field a search looks in. */
export type SearchField = (typeof SEARCH_FIELDS)[number];

/** GET /v1/search. */
export const searchAnswerSchema = z.strictObject({
  hits: z
    .array(
      z.strictObject({
        kind: z.enum(['call', 'output']),
        call_id: z.string(),
        output_id: z.string().nullable().describe('set for an output (sample or content)'),
        task_id: z.string().nullable(),
        tool_id: z.string(),
        created_at: iso,
        field: z.enum(SEARCH_FIELDS).describe('where every item was found'),
        excerpt: z.string().describe('up to 160 characters of the field around the first item, as stored'),
      }),
    )
    .describe('newest first (created_at, then id, then field)'),
  next_cursor: nextCursor,
});
/** A page of search hits. */
export type SearchAnswer = z.infer<typeof searchAnswerSchema>;
