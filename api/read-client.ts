/**
 * The read API seen from a client: {@link ReadQueries} over HTTP, so the CLI runs the same
 * commands against a running server (whose embedded ClickHouse it cannot open itself) or
 * straight on ClickHouse. Answers are checked against the same zod schemas the server uses.
 */
import type { z } from 'zod';
import { AppError } from '../platform/errors.ts';
import { parseKeepingRaw } from '../schemas/lossless-json.ts';
import type { ReadQueries } from '../queries/index.ts';
import { READ_ROUTES, type ReadRoute, type RequestQuery } from './read-route-table.ts';

/** Where the server is and how to authenticate. */
export interface ReadClientOptions {
  url: string;
  apiKey?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

// What the server serves as stored text: kept as text here too (RawJson), so an answer printed
// again (the CLI's --json) still hashes to args_hash.
const RAW_KEYS: ReadonlySet<string> = new Set(['args', 'result_summary', 'tokens_used']);

/** A route's URL with its `:name` segments filled in (percent-encoded). */
function pathOf(route: ReadRoute, params: Record<string, string> = {}): string {
  return route.url.replace(/:([a-z_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}

/** A {@link ReadQueries} that calls a tool-audit server: one method per route of READ_ROUTES. */
export function createHttpReadQueries(opts: ReadClientOptions): ReadQueries {
  const base = opts.url.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;
  async function get<S extends z.ZodType>(path: string, params: RequestQuery, schema: S): Promise<z.infer<S>> {
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
      throw new AppError('SERVER_UNAVAILABLE', `GET ${url} failed: ${(err as Error).message}`, { retryable: true, cause: err });
    }
    const text = await res.text();
    if (!res.ok) {
      let message = text.slice(0, 300);
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? message;
      } catch {
        // not JSON: keep the text
      }
      throw new AppError(res.status === 429 || res.status >= 500 ? 'SERVER_UNAVAILABLE' : 'SERVER_REFUSED', `GET ${path} answered ${res.status}: ${message}`, {
        retryable: res.status === 429 || res.status >= 500,
      });
    }
    const body = parseKeepingRaw(text, RAW_KEYS);
    if (body === undefined) throw new AppError('SERVER_REFUSED', `GET ${path} answered ${res.status} with malformed JSON`, { retryable: false });
    return schema.parse(body);
  }
  const queries: Partial<Record<keyof ReadQueries, (p: never) => Promise<unknown>>> = {};
  for (const route of READ_ROUTES) {
    queries[route.method] = (p) => {
      const req = route.request(p);
      return get(pathOf(route, req.params), req.query, route.response);
    };
  }
  return queries as unknown as ReadQueries;
}
