/**
 * The read API of SPEC §5 as data: each route's path, input and output schemas and how it calls
 * its query. Registration (routes/read.ts) and the OpenAPI document (openapi.ts) both read this
 * table, so the documentation cannot drift from what is served.
 */
import { z } from 'zod';
import type {
  ByAgentParams,
  ByTaskParams,
  ByToolInvocationsParams,
  ByToolStatsParams,
  DedupParams,
  ExpensiveParams,
  FailedParams,
  IdenticalOutputsParams,
  ReadQueries,
  SequencesParams,
  SlowParams,
  TaskListParams,
  ToolOutputsParams,
  ToolSeriesParams,
  ToolsSummaryParams,
  ViolationsParams,
  QuarantineListParams,
  QuarantineShowParams,
  CacheSimulationParams,
  TtlCurveParams,
  OutputContentParams,
} from '../queries/index.ts';
import { DEFAULT_CONTENT_BYTES, MAX_CONTENT_BYTES } from '../queries/output-content.ts';
import { quarantineListSchema, quarantineShowSchema } from '../queries/quarantine-schemas.ts';
import { budgetDecisionsSchema, budgetListSchema } from '../queries/budgets/schemas.ts';
import type { BudgetDecisionsParams } from '../queries/budgets/sql.ts';
import { cacheSimulationSchema, ttlCurveSchema } from '../queries/cache-simulation.ts';
import type { HintsParams } from '../queries/hints.ts';
import type { ModelCostParams } from '../queries/model-cost.ts';
import { HINT_KINDS } from '../schemas/optimization-hint.ts';
import type { TimeWindow } from '../queries/sql.ts';
import { PACKET_TYPES } from '../schemas/packets.ts';
import { uuidSchema } from '../schemas/common.ts';
import { consistencyProofSchema, inclusionProofSchema, logHeadsSchema, type InclusionProof, type LogHeadsParams, type NoProof } from '../queries/audit-log-proof.ts';
import { MAX_SEQUENCE_LENGTH } from '../queries/common-sequences.ts';
import type { SearchParams } from '../queries/search.ts';
import { MAX_SEARCH_ITEM_CHARS } from '../queries/search-terms.ts';
import { orchestratorSchema, statusSchema } from '../schemas/tool-invocation.ts';
import { notFound } from '../platform/errors.ts';
import {
  agentToolsSchema,
  dedupSchema,
  expensiveSchema,
  failedSchema,
  identicalOutputsSchema,
  invocationListSchema,
  outputContentSchema,
  sequencesSchema,
  slowSchema,
  taskListSchema,
  taskViewSchema,
  toolOutputsSchema,
  toolSeriesSchema,
  toolStatsSchema,
  toolsSummarySchema,
  violationsSchema,
  hintsListSchema,
  manifestHistorySchema,
  modelCostSchema,
  manifestSchema,
  mcpServersSchema,
  SEARCH_FIELDS,
  searchAnswerSchema,
} from '../schemas/answers.ts';
import {
  DEFAULT_LIMIT,
  intParam,
  listQuery,
  bucketSecondsParam,
  minCountParam,
  errorCategoryParam,
  pathId,
  plainListQuery,
  thresholdMsParam,
  thresholdUsdParam,
  given,
  windowOf,
  type ReadDefaults,
} from './read-params.ts';

/** One GET route of the read API. */
export interface ReadRoute {
  /** fastify path, e.g. `/v1/tools/:tool_id/stats`. */
  url: string;
  operationId: string;
  /** The {@link ReadQueries} method the route serves; the HTTP client (read-client.ts) offers it by calling the route. */
  method: keyof ReadQueries;
  /** The inverse of `run`: the path and query parameters of a call of `method`. */
  request(p: never): { params?: Record<string, string>; query: RequestQuery };
  summary: string;
  params?: z.ZodObject;
  query: z.ZodObject;
  response: z.ZodType;
  /** When the path names one record: what a 404 means (declared in /openapi.json). */
  notFound?: string;
  /** When the record may be answered 409 (it no longer matches what the audit log holds of it): what that means. */
  conflict?: string;
  /** Runs the query of validated input. */
  run(queries: ReadQueries, input: { params: Record<string, string>; query: Record<string, unknown> }, defaults: ReadDefaults): Promise<unknown>;
}

/**
 * A route as written: its handler sees the output types of its own `params` and `query`
 * schemas, so no handler states its input's type by hand.
 */
interface TypedReadRoute<P extends z.ZodObject, S extends z.ZodObject> extends Omit<ReadRoute, 'params' | 'query' | 'run'> {
  params?: P;
  query: S;
  run(queries: ReadQueries, input: { params: z.output<P>; query: z.output<S> }, defaults: ReadDefaults): Promise<unknown>;
}

/**
 * Declares a read route: types its handler from its schemas (as fastify's type providers do).
 * Registration (routes/read.ts) parses a request's path and query with these same schemas
 * before it calls `run`, which is what makes the table's erased handler type safe.
 */
function readRoute<S extends z.ZodObject, P extends z.ZodObject = z.ZodObject<Record<string, never>>>(route: TypedReadRoute<P, S>): ReadRoute {
  return route as unknown as ReadRoute;
}

/** Query-string values of a request (undefined: left out). */
export type RequestQuery = Record<string, string | number | undefined>;
const windowQuery = (w: TimeWindow): RequestQuery => ({ from: new Date(w.fromMs).toISOString(), to: new Date(w.toMs).toISOString() });
const pageQuery = (p: { window: TimeWindow; limit: number; cursor?: string }): RequestQuery => ({ ...windowQuery(p.window), limit: p.limit, cursor: p.cursor });

const page = (q: { limit?: number; cursor?: string }) => ({ limit: q.limit ?? DEFAULT_LIMIT, ...(q.cursor === undefined ? {} : { cursor: q.cursor }) });
const toolParams = z.strictObject({ tool_id: pathId.describe('the tool, e.g. search_web') });

/** Every read route. */
export const READ_ROUTES: ReadRoute[] = [
  readRoute({
    url: '/v1/tools',
    operationId: 'tools',
    method: 'tools',
    request: (p: ToolsSummaryParams) => ({ query: { ...windowQuery(p.window), limit: p.limit } }),
    summary: 'Every tool with its invocations, success rate, average and p95 duration and total cost, most invoked first (what `tool-audit top` shows).',
    query: z.strictObject({ from: listQuery.from, to: listQuery.to, limit: listQuery.limit.describe('tools to return at most (default 100)') }),
    response: toolsSummarySchema,
    run: (qs, { query: q }, d) => {
      return qs.tools({ window: windowOf(q, d), limit: q.limit ?? DEFAULT_LIMIT });
    },
  }),
  readRoute({
    url: '/v1/tools/series',
    operationId: 'toolSeries',
    method: 'toolSeries',
    request: (p: ToolSeriesParams) => ({ query: { ...windowQuery(p.window), bucket_s: p.bucketS } }),
    summary: 'Calls and cost per tool and time bucket of bucket_s seconds (buckets with calls only), for sparklines.',
    query: z.strictObject({ from: listQuery.from, to: listQuery.to, bucket_s: bucketSecondsParam }),
    response: toolSeriesSchema,
    run: (qs, { query: q }, d) => {
      return qs.toolSeries({ window: windowOf(q, d), bucketS: q.bucket_s ?? 3600 });
    },
  }),
  readRoute({
    url: '/v1/tasks',
    operationId: 'tasks',
    method: 'tasks',
    request: (p: TaskListParams) => ({ query: { ...windowQuery(p.window), limit: p.limit } }),
    summary: 'Tasks with calls in the window with their calls, failed calls, total cost, agents and first/last call, most recently active first.',
    query: z.strictObject({ from: listQuery.from, to: listQuery.to, limit: listQuery.limit.describe('tasks to return at most (default 100)') }),
    response: taskListSchema,
    run: (qs, { query: q }, d) => {
      return qs.tasks({ window: windowOf(q, d), limit: q.limit ?? DEFAULT_LIMIT });
    },
  }),
  readRoute({
    url: '/v1/tools/:tool_id/stats',
    operationId: 'toolStats',
    method: 'toolStats',
    request: (p: ByToolStatsParams) => ({ params: { tool_id: p.toolId }, query: { ...windowQuery(p.window), limit: p.limit } }),
    summary: "One tool's invocations, success rate, average and p95 duration, total cost and error messages (ByToolId).",
    params: toolParams,
    query: z.strictObject({ from: listQuery.from, to: listQuery.to, limit: listQuery.limit.describe('error messages to return at most (default 100)') }),
    response: toolStatsSchema,
    run: (qs, { params, query: q }, d) => {
      return qs.toolStats({ toolId: params.tool_id, window: windowOf(q, d), limit: q.limit ?? DEFAULT_LIMIT });
    },
  }),
  readRoute({
    url: '/v1/tools/:tool_id/invocations',
    operationId: 'toolInvocations',
    method: 'toolInvocations',
    request: (p: ByToolInvocationsParams) => ({ params: { tool_id: p.toolId }, query: pageQuery(p) }),
    summary: "One tool's invocations, newest first (ByToolId).",
    params: toolParams,
    query: plainListQuery,
    response: invocationListSchema,
    run: (qs, { params, query }, d) => qs.toolInvocations({ toolId: params.tool_id, window: windowOf(query, d), ...page(query) }),
  }),
  readRoute({
    url: '/v1/tools/:tool_id/outputs',
    operationId: 'toolOutputs',
    method: 'toolOutputs',
    request: (p: ToolOutputsParams) => ({ params: { tool_id: p.toolId }, query: pageQuery(p) }),
    summary: "One tool's distinct outputs (one per content_hash), most recently seen first (ByTool outputs).",
    params: toolParams,
    query: plainListQuery,
    response: toolOutputsSchema,
    run: (qs, { params, query }, d) => qs.toolOutputs({ toolId: params.tool_id, window: windowOf(query, d), ...page(query) }),
  }),
  readRoute({
    url: '/v1/agents/:agent_id/tools',
    operationId: 'agentTools',
    method: 'agentTools',
    request: (p: ByAgentParams) => ({ params: { agent_id: p.agentId }, query: pageQuery(p) }),
    summary: "One agent's tool frequency, tool sequence (call order) and invocations, newest first (ByAgent).",
    params: z.strictObject({ agent_id: pathId.describe('the agent, e.g. QA_Agent') }),
    query: plainListQuery,
    response: agentToolsSchema,
    run: (qs, { params, query }, d) => qs.agentTools({ agentId: params.agent_id, window: windowOf(query, d), ...page(query) }),
  }),
  readRoute({
    url: '/v1/tasks/:task_id',
    operationId: 'task',
    method: 'task',
    request: (p: ByTaskParams) => ({ params: { task_id: p.taskId }, query: pageQuery(p) }),
    summary: "One task's invocations in call order, their dependencies and outputs, and the workflow DAG (ByTask). from/to default to the whole retention.",
    params: z.strictObject({ task_id: pathId.describe('the task') }),
    query: plainListQuery,
    response: taskViewSchema,
    run: (qs, { params, query }, d) => qs.task({ taskId: params.task_id, window: windowOf(query, d, Date.now(), true), ...page(query) }),
  }),
  readRoute({
    url: '/v1/calls/expensive',
    operationId: 'expensiveCalls',
    method: 'expensive',
    request: (p: ExpensiveParams) => ({ query: { ...pageQuery(p), threshold_usd: p.thresholdUsd } }),
    summary: 'Calls costing more than threshold_usd, most expensive first, with their count and total cost.',
    query: z.strictObject({ ...listQuery, threshold_usd: thresholdUsdParam }),
    response: expensiveSchema,
    run: (qs, { query: q }, d) => {
      return qs.expensive({ thresholdUsd: q.threshold_usd ?? d.expensiveThresholdUsd, window: windowOf(q, d), ...page(q) });
    },
  }),
  readRoute({
    url: '/v1/calls/slow',
    operationId: 'slowCalls',
    method: 'slow',
    request: (p: SlowParams) => ({ query: { ...pageQuery(p), threshold_ms: p.thresholdMs } }),
    summary: 'Calls lasting longer than threshold_ms, slowest first, with their count.',
    query: z.strictObject({ ...listQuery, threshold_ms: thresholdMsParam }),
    response: slowSchema,
    run: (qs, { query: q }, d) => {
      return qs.slow({ thresholdMs: q.threshold_ms ?? d.slowThresholdMs, window: windowOf(q, d), ...page(q) });
    },
  }),
  readRoute({
    url: '/v1/calls/failed',
    operationId: 'failedCalls',
    method: 'failed',
    request: (p: FailedParams) => ({ query: { ...pageQuery(p), error_category: p.errorCategory } }),
    summary: 'Failed calls newest first, failures per status and per error_category, and the most frequent error messages; optionally of one error_category.',
    query: z.strictObject({ ...listQuery, error_category: errorCategoryParam }),
    response: failedSchema,
    run: (qs, { query: q }, d) => {
      return qs.failed({ window: windowOf(q, d), ...page(q), ...(q.error_category ? { errorCategory: q.error_category } : {}) });
    },
  }),
  readRoute({
    url: '/v1/dedup/candidates',
    operationId: 'dedupCandidates',
    method: 'dedup',
    request: (p: DedupParams) => ({ query: { ...pageQuery(p), min_count: p.minCount } }),
    summary: 'Calls repeated with identical args (tool_id + args_hash), with what the repeats beyond the first cost, and totals.',
    query: z.strictObject({ ...listQuery, min_count: minCountParam }),
    response: dedupSchema,
    run: (qs, { query: q }, d) => {
      return qs.dedup({ minCount: q.min_count ?? 2, window: windowOf(q, d), ...page(q) });
    },
  }),
  readRoute({
    url: '/v1/outputs/identical',
    operationId: 'identicalOutputs',
    method: 'identicalOutputs',
    request: (p: IdenticalOutputsParams) => ({ query: { ...pageQuery(p), min_count: p.minCount, tool_id: p.toolId } }),
    summary: 'Outputs of one tool with the same content_hash, with the calls that produced them (BySampleHash).',
    query: z.strictObject({ ...listQuery, min_count: minCountParam, tool_id: pathId.optional().describe('only this tool') }),
    response: identicalOutputsSchema,
    run: (qs, { query: q }, d) => {
      return qs.identicalOutputs({ minCount: q.min_count ?? 2, window: windowOf(q, d), ...page(q), ...(q.tool_id ? { toolId: q.tool_id } : {}) });
    },
  }),
  readRoute({
    url: '/v1/workflows/sequences',
    operationId: 'commonSequences',
    method: 'sequences',
    request: (p: SequencesParams) => ({ query: { ...pageQuery(p), length: p.length, min_count: p.minCount } }),
    summary: "Runs of `length` consecutive tools in tasks' calls that occur at least min_count times (CommonSequences).",
    query: z.strictObject({
      ...listQuery,
      length: intParam(2, MAX_SEQUENCE_LENGTH).optional().describe('tools per sequence (default 3)'),
      min_count: intParam(1, 1_000_000_000).optional().describe('fewest occurrences to report (default 2)'),
    }),
    response: sequencesSchema,
    run: (qs, { query: q }, d) => {
      return qs.sequences({ length: q.length ?? 3, minCount: q.min_count ?? 2, window: windowOf(q, d), ...page(q) });
    },
  }),
  readRoute({
    url: '/v1/violations',
    operationId: 'violations',
    method: 'violations',
    request: (p: ViolationsParams) => ({ query: { ...pageQuery(p), invariant: p.invariant, task_id: p.taskId, call_id: p.callId, tool_id: p.toolId } }),
    summary: 'Violations found by the auditor (SHOULD and cross-segment rules), newest first, and counts per invariant; from/to apply to detected_at; task_id / call_id / tool_id keep those naming a call of the task / the call / a call of the tool.',
    query: z.strictObject({
      ...listQuery,
      invariant: z.string().min(1).max(64).optional().describe('only this invariant, e.g. I8'),
      task_id: pathId.optional().describe('only violations naming one of this task’s calls'),
      call_id: pathId.optional().describe('only violations naming this call (or output, tool) id'),
      tool_id: pathId.optional().describe('only violations naming a call of this tool'),
    }),
    response: violationsSchema,
    run: (qs, { query: q }, d) => {
      return qs.violations({ window: windowOf(q, d), ...page(q), ...given({ invariant: q.invariant, taskId: q.task_id, callId: q.call_id, toolId: q.tool_id }) });
    },
  }),
  readRoute({
    url: '/v1/search',
    operationId: 'search',
    method: 'search',
    request: (p: SearchParams) => ({
      query: { ...pageQuery(p), q: p.q, tool_id: p.toolId, agent_id: p.agentId, status: p.status, task_id: p.taskId, orchestrator: p.orchestrator, field: p.field },
    }),
    summary:
      'Calls and outputs whose args, result summary, error, output sample or full output content hold every term and "quoted phrase" of q (case-insensitive, whole tokens; a JSON-escaped value is found as written), newest first, each hit naming its field with an excerpt; from/to apply to created_at.',
    query: z.strictObject({
      ...listQuery,
      q: z.string().max(MAX_SEARCH_ITEM_CHARS).optional().describe('terms and "quoted phrases", all of which must be in one field (none: no hits)'),
      tool_id: pathId.optional().describe('only calls (and their outputs) of this tool'),
      agent_id: pathId.optional().describe('only calls of this agent (and their outputs)'),
      status: statusSchema.optional().describe('only calls with this status (and their outputs)'),
      task_id: pathId.optional().describe('only calls and outputs of this task'),
      orchestrator: orchestratorSchema.optional().describe('only calls from this orchestrator (and their outputs)'),
      field: z.enum(SEARCH_FIELDS).optional().describe('only this field (default: every field)'),
    }),
    response: searchAnswerSchema,
    run: (qs, { query: q }, d) => {
      const filters = given({ toolId: q.tool_id, agentId: q.agent_id, status: q.status, taskId: q.task_id, orchestrator: q.orchestrator, field: q.field });
      return qs.search({ q: q.q ?? '', window: windowOf(q, d), ...page(q), ...filters });
    },
  }),
  readRoute({
    url: '/v1/quarantine',
    operationId: 'quarantine',
    method: 'quarantine',
    request: (p: QuarantineListParams) => ({ query: { ...pageQuery(p), reason: p.reason, source: p.source, packet_type: p.packetType } }),
    summary:
      'Quarantined packets (they broke a MUST rule), newest first, with their exact bytes (raw + raw_encoding), reason, origin and every replay; counts per reason. from/to apply to received_at.',
    query: z.strictObject({
      ...listQuery,
      reason: z.string().min(1).max(64).optional().describe('only this reason code, e.g. I5_args_hash'),
      source: z.string().min(1).max(512).optional().describe('only packets whose quarantine_id starts with this (kafka, http, kafka:topic/partition) or that came in with this HTTP request id'),
      packet_type: z.enum(PACKET_TYPES).optional().describe('only this packet type'),
    }),
    response: quarantineListSchema,
    run: (qs, { query: q }, d) => {
      return qs.quarantine({ window: windowOf(q, d), ...page(q), ...quarantineFilter(q) });
    },
  }),
  readRoute({
    url: '/v1/outputs/:output_id/content',
    operationId: 'outputContent',
    method: 'outputContent',
    request: (p: OutputContentParams) => ({ params: { output_id: p.outputId }, query: { max_bytes: p.maxBytes } }),
    summary: `One output's full content as stored (JSON text for json outputs), with its metadata; at most max_bytes bytes of UTF-8 (default ${DEFAULT_CONTENT_BYTES}), cut at a code point, truncated saying so. 404 when unknown or when its retention has run out.`,
    params: z.strictObject({ output_id: pathId.describe('the output (a UUID; any other id names no output: 404)') }),
    notFound: 'no output has this id, or its content has expired',
    conflict: 'the stored content does not hash to the output\'s content_hash: it was changed after it was stored, and is not served',
    query: z.strictObject({ max_bytes: intParam(1, MAX_CONTENT_BYTES).optional().describe(`bytes of content to return at most (default ${DEFAULT_CONTENT_BYTES}, at most ${MAX_CONTENT_BYTES})`) }),
    response: outputContentSchema,
    run: async (qs, { params, query }) => {
      const id = params.output_id;
      const found = uuidSchema.safeParse(id).success ? await qs.outputContent({ outputId: id, maxBytes: query.max_bytes ?? DEFAULT_CONTENT_BYTES }) : null;
      if (!found) throw notFound(`no stored content for output ${params.output_id}`);
      return found;
    },
  }),
  ...proofRoutes(),
  readRoute({
    url: '/v1/log/heads',
    operationId: 'logHeads',
    method: 'logHeads',
    request: (p: LogHeadsParams) => ({ query: { from_size: p.fromSize, to_size: p.toSize, limit: p.limit } }),
    summary: 'Signed tree heads of the audit log with tree_size in [from_size, to_size], oldest first: keep them outside tool-audit, and a later head must be consistent with them.',
    query: z.strictObject({
      from_size: intParam(0, Number.MAX_SAFE_INTEGER).optional().describe('smallest tree size (default 0)'),
      to_size: intParam(0, Number.MAX_SAFE_INTEGER).optional().describe('largest tree size (default: the newest)'),
      limit: intParam(1, 10_000).optional().describe('heads at most (default 1000)'),
    }),
    response: logHeadsSchema,
    run: (qs, { query: q }) => {
      return qs.logHeads({ fromSize: q.from_size ?? 0, toSize: q.to_size ?? Number.MAX_SAFE_INTEGER, limit: q.limit ?? 1000 });
    },
  }),
  readRoute({
    url: '/v1/log/consistency/:from_size/:to_size',
    operationId: 'logConsistency',
    method: 'logConsistency',
    request: (p: { fromSize: number; toSize: number }) => ({ params: { from_size: String(p.fromSize), to_size: String(p.toSize) }, query: {} }),
    summary: 'The RFC 9162 consistency proof between the signed heads of two tree sizes: the older tree is a prefix of the newer (nothing logged was changed or taken out). Check it offline with `tool-audit verify-proof FILE --public-key K`. 404 when to_size has no signed head; 409 when from_size has none while to_size has one (it was removed or never signed: the answer names the root the stored leaves give at from_size, to compare with the checkpoint you hold).',
    params: z.strictObject({ from_size: pathId.describe('the older tree size (one of a signed head)'), to_size: pathId.describe('the newer tree size (one of a signed head), ≥ from_size') }),
    query: z.strictObject({}),
    response: consistencyProofSchema,
    notFound: 'no signed head has to_size, or from_size > to_size',
    conflict: 'no signed head of from_size is stored while to_size has one: the message names the root the stored leaves give at from_size',
    run: async (qs, { params }) => {
      const size = (s: string | undefined) => (/^[1-9][0-9]{0,15}$/.test(s ?? '') ? Number(s) : undefined);
      const [from, to] = [size(params.from_size), size(params.to_size)];
      const found = from !== undefined && to !== undefined ? await qs.logConsistency({ fromSize: from, toSize: to }) : null;
      if (!found) throw notFound(`no signed heads of tree sizes ${params.from_size} and ${params.to_size} (from_size ≤ to_size)`);
      return found;
    },
  }),
  readRoute({
    url: '/v1/quarantine/:quarantine_id',
    operationId: 'quarantineRecord',
    method: 'quarantineRecord',
    request: (p: QuarantineShowParams) => ({ params: { quarantine_id: p.quarantineId }, query: {} }),
    summary: 'One quarantined packet by its quarantine_id (percent-encoded: kafka%3Atopic%2F3%4017, http%3A<request_id>%23<index>), with its exact bytes and replays; 404 when unknown.',
    params: z.strictObject({ quarantine_id: z.string().min(1).max(512).describe('the quarantine_id (source_key) of the packet') }),
    notFound: 'no quarantined packet has this id',
    query: z.strictObject({}),
    response: quarantineShowSchema,
    run: async (qs, { params }) => {
      const found = await qs.quarantineRecord({ quarantineId: params.quarantine_id });
      if (!found) throw notFound(`no quarantined packet ${JSON.stringify(params.quarantine_id)}`);
      return found;
    },
  }),
  readRoute({
    url: '/v1/budgets',
    operationId: 'budgets',
    method: 'budgets',
    request: () => ({ query: {} }),
    summary:
      'Every budget in force with its figures for the current UTC period: spent (SUM(cost_usd) of stored calls in scope), reserved (allowed checks whose calls are not stored yet), remaining. Set with PUT /v1/budgets (admin scope).',
    query: z.strictObject({}),
    response: budgetListSchema,
    run: (qs) => qs.budgets({}),
  }),
  readRoute({
    url: '/v1/budget/decisions',
    operationId: 'budgetDecisions',
    method: 'budgetDecisions',
    request: (p: BudgetDecisionsParams) => ({ query: { ...pageQuery(p), decision: p.decision } }),
    summary: 'Recorded budget check decisions, newest first: the request, the figures of every matching budget as the check saw them, and the answer. from/to apply to decided_at.',
    query: z.strictObject({ ...listQuery, decision: z.enum(['allow', 'warn', 'deny']).optional().describe('only this decision') }),
    response: budgetDecisionsSchema,
    run: (qs, { query: q }, d) => {
      return qs.budgetDecisions({ window: windowOf(q, d), ...page(q), ...(q.decision ? { decision: q.decision } : {}) });
    },
  }),
  readRoute({
    url: '/v1/manifests',
    operationId: 'manifest',
    method: 'manifest',
    request: () => ({ query: {} }),
    summary: 'The current tool manifest (tool-smith format, every default applied), its version and when it took effect.',
    query: z.strictObject({}),
    response: manifestSchema,
    run: (qs) => qs.manifest({}),
  }),
  readRoute({
    url: '/v1/manifests/:tool_id/history',
    operationId: 'manifestHistory',
    method: 'manifestHistory',
    request: (p: { toolId: string }) => ({ params: { tool_id: p.toolId }, query: {} }),
    summary: "One tool's entry in every manifest version since it was first declared, newest first (null where a version does not declare it).",
    params: toolParams,
    query: z.strictObject({}),
    response: manifestHistorySchema,
    run: (qs, { params }) => qs.manifestHistory({ toolId: params.tool_id }),
  }),
  readRoute({
    url: '/v1/mcp/servers',
    operationId: 'mcpServers',
    method: 'mcpServers',
    request: () => ({ query: {} }),
    summary:
      "MCP servers reported by the `tool-audit mcp` gateway (POST /v1/mcp/tools), each with its tools: latest definition hash, first seen, last change, definitions seen, removed; and its definition changes. At most 10,000 (server, tool) pairs (truncated says when more).",
    query: z.strictObject({}),
    response: mcpServersSchema,
    run: (qs) => qs.mcpServers({}),
  }),
  readRoute({
    url: '/v1/cache/simulation',
    operationId: 'cacheSimulation',
    method: 'cacheSimulation',
    request: (p: CacheSimulationParams) => ({ query: { ...windowQuery(p.window), tool_id: p.toolId, ttl_ms: p.ttlMs } }),
    summary: 'What a TTL cache keyed by (tool_id, args_hash) would have served and saved, per tool, replayed over the window (docs/manifests-budgets-hints.md: Cache simulation).',
    query: z.strictObject({
      from: listQuery.from,
      to: listQuery.to,
      tool_id: pathId.optional().describe('only this tool'),
      ttl_ms: intParam(0, 365 * 86_400_000).optional().describe("TTL to simulate, ms (default: each tool's manifest cache_ttl_ms)"),
    }),
    response: cacheSimulationSchema,
    run: (qs, { query: q }, d) => {
      return qs.cacheSimulation({ window: windowOf(q, d), ...(q.tool_id ? { toolId: q.tool_id } : {}), ...(q.ttl_ms === undefined ? {} : { ttlMs: q.ttl_ms }) });
    },
  }),
  readRoute({
    url: '/v1/cache/ttl-curve',
    operationId: 'cacheTtlCurve',
    method: 'ttlCurve',
    request: (p: TtlCurveParams) => ({ query: { ...windowQuery(p.window), tool_id: p.toolId } }),
    summary: "A tool's cache savings (without tool_id: every idempotent tool's, together) at TTLs of 1 min, 5 min, 15 min, 1 h, 6 h, 24 h and 7 d, and the shortest TTL reaching 90 % of the 7-day savings.",
    query: z.strictObject({ from: listQuery.from, to: listQuery.to, tool_id: pathId.optional().describe('the tool (default: every idempotent tool, together)') }),
    response: ttlCurveSchema,
    run: (qs, { query: q }, d) => {
      return qs.ttlCurve({ window: windowOf(q, d), ...(q.tool_id ? { toolId: q.tool_id } : {}) });
    },
  }),
  readRoute({
    url: '/v1/hints',
    operationId: 'hints',
    method: 'hints',
    request: (p: HintsParams) => ({ query: { ...pageQuery(p), kind: p.kind } }),
    summary: 'Optimization hints (cache_candidate, bundle_candidate, retry_storm) from the hints job and external producers, newest first; from/to apply to created_at (docs/manifests-budgets-hints.md: Optimization hints).',
    query: z.strictObject({ ...listQuery, kind: z.enum(HINT_KINDS).optional().describe('only this kind') }),
    response: hintsListSchema,
    run: (qs, { query: q }, d) => {
      return qs.hints({ window: windowOf(q, d), ...page(q), ...(q.kind ? { kind: q.kind } : {}) });
    },
  }),
  readRoute({
    url: '/v1/cost/models',
    operationId: 'modelCost',
    method: 'modelCost',
    request: (p: ModelCostParams) => ({ query: { ...windowQuery(p.window), limit: p.limit } }),
    summary: "Model turns of the window per model and per agent (turns, tokens in / out / cached, cost, turns without a cost), each agent's tool calls and tool cost beside its model cost, and the totals.",
    query: z.strictObject({ from: listQuery.from, to: listQuery.to, limit: listQuery.limit.describe('models and agents to return at most (default 100)') }),
    response: modelCostSchema,
    run: (qs, { query: q }, d) => {
      return qs.modelCost({ window: windowOf(q, d), limit: q.limit ?? DEFAULT_LIMIT });
    },
  }),
];

/** The quarantine filters of a validated query (only those given). */
export function quarantineFilter(q: { reason?: string; source?: string; packet_type?: string }): { reason?: string; source?: string; packetType?: string } {
  return given({ reason: q.reason, source: q.source, packetType: q.packet_type });
}

/** GET /v1/calls/{call_id}/proof, GET /v1/outputs/{output_id}/proof, GET /v1/turns/{turn_id}/proof and GET /v1/runs/{run_id}/proof. */
function proofRoutes(): ReadRoute[] {
  const proven = (what: string, r: InclusionProof | NoProof) => {
    if (!('why' in r)) return r;
    throw notFound(r.why === 'not_yet' ? `${what} is not in a signed tree of the audit log yet (leaves are added a minute after a row is stored, heads signed every AUDIT_LOG_HEAD_INTERVAL_MS)` : `no ${what}`);
  };
  const summary = (what: string) =>
    `The ${what}'s proof of inclusion in the audit log: its leaf (the record as serialized, and its hash), the RFC 9162 inclusion path and the newest signed tree head. Check it offline with \`tool-audit verify-proof FILE --public-key K\`. 404 when unknown or not in a signed tree yet.`;
  return [
    readRoute({
      url: '/v1/calls/:call_id/proof',
      operationId: 'callProof',
      method: 'callProof',
      request: (p: { callId: string }) => ({ params: { call_id: p.callId }, query: {} }),
      summary: summary('tool_call'),
      params: z.strictObject({ call_id: pathId.describe('the call (a UUID)') }),
      notFound: 'no call has this id, or it is not in a signed tree of the audit log yet',
      query: z.strictObject({}),
      response: inclusionProofSchema,
      run: async (qs, { params }) => proven(`tool_call ${params.call_id}`, uuidSchema.safeParse(params.call_id).success ? await qs.callProof({ callId: params.call_id }) : { why: 'unknown' }),
    }),
    readRoute({
      url: '/v1/outputs/:output_id/proof',
      operationId: 'outputProof',
      method: 'outputProof',
      request: (p: { outputId: string }) => ({ params: { output_id: p.outputId }, query: {} }),
      summary: summary('output'),
      params: z.strictObject({ output_id: pathId.describe('the output (a UUID)') }),
      notFound: 'no output has this id, or it is not in a signed tree of the audit log yet',
      query: z.strictObject({}),
      response: inclusionProofSchema,
      run: async (qs, { params }) => proven(`output ${params.output_id}`, uuidSchema.safeParse(params.output_id).success ? await qs.outputProof({ outputId: params.output_id }) : { why: 'unknown' }),
    }),
    readRoute({
      url: '/v1/turns/:turn_id/proof',
      operationId: 'turnProof',
      method: 'turnProof',
      request: (p: { turnId: string }) => ({ params: { turn_id: p.turnId }, query: {} }),
      summary: summary('model turn'),
      params: z.strictObject({ turn_id: pathId.describe('the model turn (a UUID)') }),
      notFound: 'no model turn has this id, or it is not in a signed tree of the audit log yet',
      query: z.strictObject({}),
      response: inclusionProofSchema,
      run: async (qs, { params }) => proven(`model turn ${params.turn_id}`, uuidSchema.safeParse(params.turn_id).success ? await qs.turnProof({ turnId: params.turn_id }) : { why: 'unknown' }),
    }),
    readRoute({
      url: '/v1/runs/:run_id/proof',
      operationId: 'runProof',
      method: 'runProof',
      request: (p: { runId: string }) => ({ params: { run_id: p.runId }, query: {} }),
      summary: summary('agent run'),
      params: z.strictObject({ run_id: pathId.describe('the agent run (a UUID)') }),
      notFound: 'no agent run has this id, or it is not in a signed tree of the audit log yet',
      query: z.strictObject({}),
      response: inclusionProofSchema,
      run: async (qs, { params }) => proven(`agent run ${params.run_id}`, uuidSchema.safeParse(params.run_id).success ? await qs.runProof({ runId: params.run_id }) : { why: 'unknown' }),
    }),
  ];
}
