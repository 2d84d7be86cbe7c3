/**
 * Read routes of single records and of the configuration calls are judged by: search,
 * quarantine, output contents, manifests, MCP servers and budgets.
 */
import { z } from 'zod';
import type { QuarantineListParams, QuarantineShowParams, OutputContentParams } from '../../queries/index.ts';
import { DEFAULT_CONTENT_BYTES, MAX_CONTENT_BYTES } from '../../queries/output-content.ts';
import { quarantineListSchema, quarantineShowSchema } from '../../queries/quarantine-schemas.ts';
import { budgetDecisionsSchema, budgetListSchema } from '../../queries/budgets/schemas.ts';
import type { BudgetDecisionsParams } from '../../queries/budgets/sql.ts';
import { PACKET_TYPES } from '../../schemas/packets.ts';
import { uuidSchema } from '../../schemas/common.ts';
import type { SearchParams } from '../../queries/search.ts';
import { MAX_SEARCH_ITEM_CHARS } from '../../queries/search-terms.ts';
import { orchestratorSchema, statusSchema } from '../../schemas/tool-invocation.ts';
import { notFound } from '../../platform/errors.ts';
import { outputContentSchema, manifestHistorySchema, manifestSchema, mcpServersSchema, SEARCH_FIELDS, searchAnswerSchema } from '../../schemas/answers.ts';
import { intParam, listQuery, pathId, given, windowOf } from '../read-params.ts';
import { readRoute, pageQuery, page, toolParams, type ReadRoute } from './route.ts';

/** These read routes, in the order /openapi.json lists them. */
export const RECORDS_ROUTES: ReadRoute[] = [
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
];

/** The quarantine filters of a validated query (only those given). */
export function quarantineFilter(q: { reason?: string; source?: string; packet_type?: string }): { reason?: string; source?: string; packetType?: string } {
  return given({ reason: q.reason, source: q.source, packetType: q.packet_type });
}
