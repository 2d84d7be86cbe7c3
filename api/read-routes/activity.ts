/**
 * Read routes about what happened: tools, tasks and agents with their calls, and the model
 * turns' cost.
 */
import { z } from 'zod';
import type { ByAgentParams, ByTaskParams, ByToolInvocationsParams, ByToolStatsParams, TaskListParams, ToolOutputsParams, ToolSeriesParams, ToolsSummaryParams } from '../../queries/index.ts';
import type { ModelCostParams } from '../../queries/model-cost.ts';
import { agentToolsSchema, invocationListSchema, taskListSchema, taskViewSchema, toolOutputsSchema, toolSeriesSchema, toolStatsSchema, toolsSummarySchema, modelCostSchema } from '../../schemas/answers.ts';
import { DEFAULT_LIMIT, listQuery, bucketSecondsParam, pathId, plainListQuery, windowOf } from '../read-params.ts';
import { readRoute, windowQuery, pageQuery, page, toolParams, type ReadRoute } from './route.ts';

/** These read routes, in the order /openapi.json lists them. */
export const ACTIVITY_ROUTES: ReadRoute[] = [
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
