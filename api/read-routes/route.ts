/**
 * What a read route is: its path, schemas, answer and handler, typed from its own schemas
 * ({@link readRoute}), and the helpers the routes share to build a request back from a call.
 */
import { z } from 'zod';
import type { ReadQueries } from '../../queries/index.ts';
import type { TimeWindow } from '../../queries/sql.ts';
import { DEFAULT_LIMIT, pathId, type ReadDefaults } from '../read-params.ts';

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
export interface TypedReadRoute<P extends z.ZodObject, S extends z.ZodObject> extends Omit<ReadRoute, 'params' | 'query' | 'run'> {
  params?: P;
  query: S;
  run(queries: ReadQueries, input: { params: z.output<P>; query: z.output<S> }, defaults: ReadDefaults): Promise<unknown>;
}

/**
 * Declares a read route: types its handler from its schemas (as fastify's type providers do).
 * Registration (routes/read.ts) parses a request's path and query with these same schemas
 * before it calls `run`, which is what makes the table's erased handler type safe.
 */
export function readRoute<S extends z.ZodObject, P extends z.ZodObject = z.ZodObject<Record<string, never>>>(route: TypedReadRoute<P, S>): ReadRoute {
  return route as unknown as ReadRoute;
}

/** Query-string values of a request (undefined: left out). */
export type RequestQuery = Record<string, string | number | undefined>;
export const windowQuery = (w: TimeWindow): RequestQuery => ({ from: new Date(w.fromMs).toISOString(), to: new Date(w.toMs).toISOString() });
export const pageQuery = (p: { window: TimeWindow; limit: number; cursor?: string }): RequestQuery => ({ ...windowQuery(p.window), limit: p.limit, cursor: p.cursor });

export const page = (q: { limit?: number; cursor?: string }) => ({ limit: q.limit ?? DEFAULT_LIMIT, ...(q.cursor === undefined ? {} : { cursor: q.cursor }) });
export const toolParams = z.strictObject({ tool_id: pathId.describe('the tool, e.g. search_web') });
