/**
 * The read API seen from a client: {@link ReadQueries} over HTTP, so the CLI runs the same
 * commands against a running server (whose embedded ClickHouse it cannot open itself) or
 * straight on ClickHouse. Answers are checked against the same zod schemas the server uses.
 */
import type { z } from 'zod';
import { AppError } from '../platform/errors.ts';
import type { ReadQueries } from '../queries/index.ts';
import {
  agentToolsSchema,
  dedupSchema,
  expensiveSchema,
  failedSchema,
  identicalOutputsSchema,
  invocationListSchema,
  sequencesSchema,
  slowSchema,
  taskListSchema,
  taskViewSchema,
  toolOutputsSchema,
  toolSeriesSchema,
  toolStatsSchema,
  toolsSummarySchema,
  violationsSchema,
} from '../queries/schemas.ts';
import type { TimeWindow } from '../queries/sql.ts';

/** Where the server is and how to authenticate. */
export interface ReadClientOptions {
  url: string;
  apiKey?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

type Params = Record<string, string | number | undefined>;
const windowQuery = (w: TimeWindow): Params => ({ from: new Date(w.fromMs).toISOString(), to: new Date(w.toMs).toISOString() });
const pageQuery = (p: { window: TimeWindow; limit: number; cursor?: string }): Params => ({ ...windowQuery(p.window), limit: p.limit, cursor: p.cursor });
const seg = encodeURIComponent;

/** A {@link ReadQueries} that calls a tool-audit server. */
export function createHttpReadQueries(opts: ReadClientOptions): ReadQueries {
  const base = opts.url.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;
  async function get<S extends z.ZodType>(path: string, params: Params, schema: S): Promise<z.infer<S>> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined) qs.set(k, String(v));
    const url = `${base}${path}${qs.size ? `?${qs}` : ''}`;
    let res: Response;
    try {
      res = await doFetch(url, {
        headers: opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {},
        signal: AbortSignal.timeout(opts.timeoutMs ?? 60_000),
      });
    } catch (err) {
      throw new AppError('CLICKHOUSE_UNAVAILABLE', `GET ${url} failed: ${(err as Error).message}`, { retryable: true, cause: err });
    }
    const text = await res.text();
    if (!res.ok) {
      let message = text.slice(0, 300);
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? message;
      } catch {
        // not JSON: keep the text
      }
      throw new AppError('INTERNAL', `GET ${path} answered ${res.status}: ${message}`, { retryable: res.status === 429 || res.status >= 500 });
    }
    return schema.parse(JSON.parse(text));
  }
  return {
    tools: (p) => get('/v1/tools', { ...windowQuery(p.window), limit: p.limit }, toolsSummarySchema),
    toolSeries: (p) => get('/v1/tools/series', { ...windowQuery(p.window), bucket_s: p.bucketS }, toolSeriesSchema),
    tasks: (p) => get('/v1/tasks', { ...windowQuery(p.window), limit: p.limit }, taskListSchema),
    toolStats: (p) => get(`/v1/tools/${seg(p.toolId)}/stats`, { ...windowQuery(p.window), limit: p.limit }, toolStatsSchema),
    toolInvocations: (p) => get(`/v1/tools/${seg(p.toolId)}/invocations`, pageQuery(p), invocationListSchema),
    toolOutputs: (p) => get(`/v1/tools/${seg(p.toolId)}/outputs`, pageQuery(p), toolOutputsSchema),
    agentTools: (p) => get(`/v1/agents/${seg(p.agentId)}/tools`, pageQuery(p), agentToolsSchema),
    task: (p) => get(`/v1/tasks/${seg(p.taskId)}`, pageQuery(p), taskViewSchema),
    expensive: (p) => get('/v1/calls/expensive', { ...pageQuery(p), threshold_usd: p.thresholdUsd }, expensiveSchema),
    slow: (p) => get('/v1/calls/slow', { ...pageQuery(p), threshold_ms: p.thresholdMs }, slowSchema),
    failed: (p) => get('/v1/calls/failed', pageQuery(p), failedSchema),
    dedup: (p) => get('/v1/dedup/candidates', { ...pageQuery(p), min_count: p.minCount }, dedupSchema),
    identicalOutputs: (p) => get('/v1/outputs/identical', { ...pageQuery(p), min_count: p.minCount, tool_id: p.toolId }, identicalOutputsSchema),
    sequences: (p) => get('/v1/workflows/sequences', { ...pageQuery(p), length: p.length, min_count: p.minCount }, sequencesSchema),
    violations: (p) => get('/v1/violations', { ...pageQuery(p), invariant: p.invariant }, violationsSchema),
  };
}
