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
  ToolOutputsParams,
  ToolsSummaryParams,
  ViolationsParams,
  CacheSimulationParams,
  TtlCurveParams,
} from '../queries/index.ts';
import { cacheSimulationSchema, ttlCurveSchema } from '../queries/cache-simulation.ts';
import { manifestHistorySchema, manifestSchema } from '../queries/manifests.ts';
import type { TimeWindow } from '../queries/sql.ts';
import { MAX_SEQUENCE_LENGTH } from '../queries/common-sequences.ts';
import {
  agentToolsSchema,
  dedupSchema,
  expensiveSchema,
  failedSchema,
  identicalOutputsSchema,
  invocationListSchema,
  sequencesSchema,
  slowSchema,
  taskViewSchema,
  toolOutputsSchema,
  toolStatsSchema,
  toolsSummarySchema,
  violationsSchema,
} from '../queries/schemas.ts';
import {
  DEFAULT_LIMIT,
  intParam,
  listQuery,
  minCountParam,
  pathId,
  plainListQuery,
  thresholdMsParam,
  thresholdUsdParam,
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
  /** Runs the query of validated input. */
  run(queries: ReadQueries, input: { params: Record<string, string>; query: Record<string, unknown> }, defaults: ReadDefaults): Promise<unknown>;
}

/** Query-string values of a request (undefined: left out). */
export type RequestQuery = Record<string, string | number | undefined>;
const windowQuery = (w: TimeWindow): RequestQuery => ({ from: new Date(w.fromMs).toISOString(), to: new Date(w.toMs).toISOString() });
const pageQuery = (p: { window: TimeWindow; limit: number; cursor?: string }): RequestQuery => ({ ...windowQuery(p.window), limit: p.limit, cursor: p.cursor });

type Q = { from?: number; to?: number; limit?: number; cursor?: string };
const page = (q: Q) => ({ limit: q.limit ?? DEFAULT_LIMIT, ...(q.cursor === undefined ? {} : { cursor: q.cursor }) });
const toolParams = z.strictObject({ tool_id: pathId.describe('the tool, e.g. search_web') });

/** Every read route. */
export const READ_ROUTES: ReadRoute[] = [
  {
    url: '/v1/tools',
    operationId: 'tools',
    method: 'tools',
    request: (p: ToolsSummaryParams) => ({ query: { ...windowQuery(p.window), limit: p.limit } }),
    summary: 'Every tool with its invocations, success rate, average and p95 duration and total cost, most invoked first (what `tool-audit top` shows).',
    query: z.strictObject({ from: listQuery.from, to: listQuery.to, limit: listQuery.limit.describe('tools to return at most (default 100)') }),
    response: toolsSummarySchema,
    run: (qs, { query }, d) => {
      const q = query as Q;
      return qs.tools({ window: windowOf(q, d), limit: q.limit ?? DEFAULT_LIMIT });
    },
  },
  {
    url: '/v1/tools/:tool_id/stats',
    operationId: 'toolStats',
    method: 'toolStats',
    request: (p: ByToolStatsParams) => ({ params: { tool_id: p.toolId }, query: { ...windowQuery(p.window), limit: p.limit } }),
    summary: "One tool's invocations, success rate, average and p95 duration, total cost and error messages (ByToolId).",
    params: toolParams,
    query: z.strictObject({ from: listQuery.from, to: listQuery.to, limit: listQuery.limit.describe('error messages to return at most (default 100)') }),
    response: toolStatsSchema,
    run: (qs, { params, query }, d) => {
      const q = query as Q;
      return qs.toolStats({ toolId: params.tool_id ?? '', window: windowOf(q, d), limit: q.limit ?? DEFAULT_LIMIT });
    },
  },
  {
    url: '/v1/tools/:tool_id/invocations',
    operationId: 'toolInvocations',
    method: 'toolInvocations',
    request: (p: ByToolInvocationsParams) => ({ params: { tool_id: p.toolId }, query: pageQuery(p) }),
    summary: "One tool's invocations, newest first (ByToolId).",
    params: toolParams,
    query: plainListQuery,
    response: invocationListSchema,
    run: (qs, { params, query }, d) => qs.toolInvocations({ toolId: params.tool_id ?? '', window: windowOf(query as Q, d), ...page(query as Q) }),
  },
  {
    url: '/v1/tools/:tool_id/outputs',
    operationId: 'toolOutputs',
    method: 'toolOutputs',
    request: (p: ToolOutputsParams) => ({ params: { tool_id: p.toolId }, query: pageQuery(p) }),
    summary: "One tool's distinct outputs (one per content_hash), most recently seen first (ByTool outputs).",
    params: toolParams,
    query: plainListQuery,
    response: toolOutputsSchema,
    run: (qs, { params, query }, d) => qs.toolOutputs({ toolId: params.tool_id ?? '', window: windowOf(query as Q, d), ...page(query as Q) }),
  },
  {
    url: '/v1/agents/:agent_id/tools',
    operationId: 'agentTools',
    method: 'agentTools',
    request: (p: ByAgentParams) => ({ params: { agent_id: p.agentId }, query: pageQuery(p) }),
    summary: "One agent's tool frequency, tool sequence (call order) and invocations, newest first (ByAgent).",
    params: z.strictObject({ agent_id: pathId.describe('the agent, e.g. QA_Agent') }),
    query: plainListQuery,
    response: agentToolsSchema,
    run: (qs, { params, query }, d) => qs.agentTools({ agentId: params.agent_id ?? '', window: windowOf(query as Q, d), ...page(query as Q) }),
  },
  {
    url: '/v1/tasks/:task_id',
    operationId: 'task',
    method: 'task',
    request: (p: ByTaskParams) => ({ params: { task_id: p.taskId }, query: pageQuery(p) }),
    summary: "One task's invocations in call order, their dependencies and outputs, and the workflow DAG (ByTask). from/to default to the whole retention.",
    params: z.strictObject({ task_id: pathId.describe('the task') }),
    query: plainListQuery,
    response: taskViewSchema,
    run: (qs, { params, query }, d) => qs.task({ taskId: params.task_id ?? '', window: windowOf(query as Q, d, Date.now(), true), ...page(query as Q) }),
  },
  {
    url: '/v1/calls/expensive',
    operationId: 'expensiveCalls',
    method: 'expensive',
    request: (p: ExpensiveParams) => ({ query: { ...pageQuery(p), threshold_usd: p.thresholdUsd } }),
    summary: 'Calls costing more than threshold_usd, most expensive first, with their count and total cost.',
    query: z.strictObject({ ...listQuery, threshold_usd: thresholdUsdParam }),
    response: expensiveSchema,
    run: (qs, { query }, d) => {
      const q = query as Q & { threshold_usd?: number };
      return qs.expensive({ thresholdUsd: q.threshold_usd ?? d.expensiveThresholdUsd, window: windowOf(q, d), ...page(q) });
    },
  },
  {
    url: '/v1/calls/slow',
    operationId: 'slowCalls',
    method: 'slow',
    request: (p: SlowParams) => ({ query: { ...pageQuery(p), threshold_ms: p.thresholdMs } }),
    summary: 'Calls lasting longer than threshold_ms, slowest first, with their count.',
    query: z.strictObject({ ...listQuery, threshold_ms: thresholdMsParam }),
    response: slowSchema,
    run: (qs, { query }, d) => {
      const q = query as Q & { threshold_ms?: number };
      return qs.slow({ thresholdMs: q.threshold_ms ?? d.slowThresholdMs, window: windowOf(q, d), ...page(q) });
    },
  },
  {
    url: '/v1/calls/failed',
    operationId: 'failedCalls',
    method: 'failed',
    request: (p: FailedParams) => ({ query: pageQuery(p) }),
    summary: 'Failed calls newest first, failures per status and the most frequent error messages.',
    query: plainListQuery,
    response: failedSchema,
    run: (qs, { query }, d) => qs.failed({ window: windowOf(query as Q, d), ...page(query as Q) }),
  },
  {
    url: '/v1/dedup/candidates',
    operationId: 'dedupCandidates',
    method: 'dedup',
    request: (p: DedupParams) => ({ query: { ...pageQuery(p), min_count: p.minCount } }),
    summary: 'Calls repeated with identical args (tool_id + args_hash), with what the repeats beyond the first cost, and totals.',
    query: z.strictObject({ ...listQuery, min_count: minCountParam }),
    response: dedupSchema,
    run: (qs, { query }, d) => {
      const q = query as Q & { min_count?: number };
      return qs.dedup({ minCount: q.min_count ?? 2, window: windowOf(q, d), ...page(q) });
    },
  },
  {
    url: '/v1/outputs/identical',
    operationId: 'identicalOutputs',
    method: 'identicalOutputs',
    request: (p: IdenticalOutputsParams) => ({ query: { ...pageQuery(p), min_count: p.minCount, tool_id: p.toolId } }),
    summary: 'Outputs of one tool with the same content_hash, with the calls that produced them (BySampleHash).',
    query: z.strictObject({ ...listQuery, min_count: minCountParam, tool_id: pathId.optional().describe('only this tool') }),
    response: identicalOutputsSchema,
    run: (qs, { query }, d) => {
      const q = query as Q & { min_count?: number; tool_id?: string };
      return qs.identicalOutputs({ minCount: q.min_count ?? 2, window: windowOf(q, d), ...page(q), ...(q.tool_id ? { toolId: q.tool_id } : {}) });
    },
  },
  {
    url: '/v1/workflows/sequences',
    operationId: 'commonSequences',
    method: 'sequences',
    request: (p: SequencesParams) => ({ query: { ...pageQuery(p), length: p.length, min_count: p.minCount } }),
    summary: "Runs of `length` consecutive tools in tasks' calls that occur at least min_count times (CommonSequences).",
    query: z.strictObject({
      ...listQuery,
      length: z
        .string()
        .regex(/^\d{1,2}$/, 'must be an integer')
        .transform(Number)
        .refine((n) => n >= 2 && n <= MAX_SEQUENCE_LENGTH, `must be from 2 to ${MAX_SEQUENCE_LENGTH}`)
        .optional()
        .describe('tools per sequence (default 3)'),
      min_count: z
        .string()
        .regex(/^\d{1,10}$/, 'must be an integer')
        .transform(Number)
        .refine((n) => n >= 1 && n <= 1_000_000_000, 'must be an integer from 1 to 1000000000')
        .optional()
        .describe('fewest occurrences to report (default 2)'),
    }),
    response: sequencesSchema,
    run: (qs, { query }, d) => {
      const q = query as Q & { length?: number; min_count?: number };
      return qs.sequences({ length: q.length ?? 3, minCount: q.min_count ?? 2, window: windowOf(q, d), ...page(q) });
    },
  },
  {
    url: '/v1/violations',
    operationId: 'violations',
    method: 'violations',
    request: (p: ViolationsParams) => ({ query: { ...pageQuery(p), invariant: p.invariant } }),
    summary: 'Violations found by the auditor (SHOULD and cross-segment rules), newest first, and counts per invariant; from/to apply to detected_at.',
    query: z.strictObject({ ...listQuery, invariant: z.string().min(1).max(64).optional().describe('only this invariant, e.g. I8') }),
    response: violationsSchema,
    run: (qs, { query }, d) => {
      const q = query as Q & { invariant?: string };
      return qs.violations({ window: windowOf(q, d), ...page(q), ...(q.invariant ? { invariant: q.invariant } : {}) });
    },
  },
  {
    url: '/v1/manifests',
    operationId: 'manifest',
    method: 'manifest',
    request: () => ({ query: {} }),
    summary: 'The current tool manifest (tool-smith format, every default applied), its version and when it took effect.',
    query: z.strictObject({}),
    response: manifestSchema,
    run: (qs) => qs.manifest({}),
  },
  {
    url: '/v1/manifests/:tool_id/history',
    operationId: 'manifestHistory',
    method: 'manifestHistory',
    request: (p: { toolId: string }) => ({ params: { tool_id: p.toolId }, query: {} }),
    summary: "One tool's entry in every manifest version since it was first declared, newest first (null where a version does not declare it).",
    params: toolParams,
    query: z.strictObject({}),
    response: manifestHistorySchema,
    run: (qs, { params }) => qs.manifestHistory({ toolId: params.tool_id ?? '' }),
  },
  {
    url: '/v1/cache/simulation',
    operationId: 'cacheSimulation',
    method: 'cacheSimulation',
    request: (p: CacheSimulationParams) => ({ query: { ...windowQuery(p.window), tool_id: p.toolId, ttl_ms: p.ttlMs } }),
    summary: 'What a TTL cache keyed by (tool_id, args_hash) would have served and saved, per tool, replayed over the window (README: Cache simulation).',
    query: z.strictObject({
      from: listQuery.from,
      to: listQuery.to,
      tool_id: pathId.optional().describe('only this tool'),
      ttl_ms: intParam(0, 365 * 86_400_000).optional().describe("TTL to simulate, ms (default: each tool's manifest cache_ttl_ms)"),
    }),
    response: cacheSimulationSchema,
    run: (qs, { query }, d) => {
      const q = query as Q & { tool_id?: string; ttl_ms?: number };
      return qs.cacheSimulation({ window: windowOf(q, d), ...(q.tool_id ? { toolId: q.tool_id } : {}), ...(q.ttl_ms === undefined ? {} : { ttlMs: q.ttl_ms }) });
    },
  },
  {
    url: '/v1/cache/ttl-curve',
    operationId: 'cacheTtlCurve',
    method: 'ttlCurve',
    request: (p: TtlCurveParams) => ({ query: { ...windowQuery(p.window), tool_id: p.toolId } }),
    summary: "A tool's cache savings (without tool_id: every idempotent tool's, together) at TTLs of 1 min, 5 min, 15 min, 1 h, 6 h, 24 h and 7 d, and the shortest TTL reaching 90 % of the 7-day savings.",
    query: z.strictObject({ from: listQuery.from, to: listQuery.to, tool_id: pathId.optional().describe('the tool (default: every idempotent tool, together)') }),
    response: ttlCurveSchema,
    run: (qs, { query }, d) => {
      const q = query as Q & { tool_id?: string };
      return qs.ttlCurve({ window: windowOf(q, d), ...(q.tool_id ? { toolId: q.tool_id } : {}) });
    },
  },
];
