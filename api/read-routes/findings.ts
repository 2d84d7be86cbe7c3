/**
 * Read routes about what to fix or save: expensive, slow and failed calls, duplicates, sequences,
 * violations, the cache simulation and the hints.
 */
import { z } from 'zod';
import type { DedupParams, ExpensiveParams, FailedParams, IdenticalOutputsParams, SequencesParams, SlowParams, ViolationsParams, CacheSimulationParams, TtlCurveParams } from '../../queries/index.ts';
import { cacheSimulationSchema, ttlCurveSchema } from '../../schemas/cache-answers.ts';
import type { HintsParams } from '../../queries/hints.ts';
import { HINT_KINDS } from '../../schemas/optimization-hint.ts';
import { MAX_SEQUENCE_LENGTH } from '../../queries/common-sequences.ts';
import { dedupSchema, expensiveSchema, failedSchema, identicalOutputsSchema, sequencesSchema, slowSchema, violationsSchema, hintsListSchema } from '../../schemas/answers.ts';
import { intParam, listQuery, minCountParam, errorCategoryParam, pathId, thresholdMsParam, thresholdUsdParam, given, windowOf } from '../read-params.ts';
import { readRoute, windowQuery, pageQuery, page, type ReadRoute } from './route.ts';

/** These read routes, in the order /openapi.json lists them. */
export const FINDINGS_ROUTES: ReadRoute[] = [
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
];
