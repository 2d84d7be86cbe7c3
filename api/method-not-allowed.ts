/**
 * 405 Method Not Allowed, with `Allow`, for a method a route does not take (RFC 9110 §15.5.6),
 * instead of fastify's 404: a client (or a fuzzer reading /openapi.json) learns the path exists
 * and what it takes. Routes are collected as they are registered; `answerOtherMethods` then
 * registers, for each path, one route taking every other method. HEAD is allowed where GET is
 * (fastify answers it from the GET route, as RFC 9110 §9.3.2 expects).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import FindMyWay from 'find-my-way';

/**
 * The `Allow` of each path, for a request whose method fastify does not route at all (PROPFIND,
 * MKCOL, …): fastify sends those to the not-found handler, which asks here. Filled by
 * {@link answerOtherMethods}.
 */
export class AllowedMethods {
  private readonly router = FindMyWay();
  private readonly paths = new Map<string, string>();

  /** Every route path with the methods it takes (its Allow, HEAD included where GET is), as recorded. */
  served(): ReadonlyMap<string, string[]> {
    return new Map([...this.paths].map(([url, allow]) => [url, allow.split(', ')]));
  }

  /** The Allow header of the path of a URL, or undefined when no route has that path. */
  allowFor(url: string): string | undefined {
    const found = this.router.find('GET', url.split('?')[0] ?? '/');
    return (found?.store as { allow?: string } | undefined)?.allow;
  }

  /** Records the Allow of a route path. */
  add(url: string, allow: string): void {
    this.paths.set(url, allow);
    this.router.on('GET', url, () => undefined, { allow });
  }
}

/** Answers 405 with Allow (in an onRequest hook: before any body is read or its type checked). */
export function methodNotAllowed(req: FastifyRequest, reply: FastifyReply, allow: string): FastifyReply {
  return reply
    .code(405)
    .header('allow', allow)
    .send({ error: 'method_not_allowed', message: `${req.method} is not allowed here; allowed: ${allow}`, request_id: req.id });
}

/** Starts collecting the methods of every route registered from now on; pass the result to {@link answerOtherMethods}. */
export function collectRouteMethods(app: FastifyInstance): Map<string, Set<string>> {
  const byUrl = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    if (route.url === '*' || route.url.endsWith('/*')) return;
    const methods = byUrl.get(route.url) ?? new Set<string>();
    for (const m of [route.method].flat()) methods.add(m.toUpperCase());
    byUrl.set(route.url, methods);
  });
  return byUrl;
}

/**
 * Registers a 405 answer for every method each collected path does not take, and records each
 * path's Allow in `allowed` for the methods fastify does not route. Call after the last route.
 */
export function answerOtherMethods(app: FastifyInstance, byUrl: Map<string, Set<string>>, allowed: AllowedMethods): void {
  for (const [url, methods] of [...byUrl]) {
    if (methods.has('GET')) methods.add('HEAD');
    const allow = [...methods].sort().join(', ');
    allowed.add(url, allow);
    const others = app.supportedMethods.filter((m) => !methods.has(m)) as HTTPMethods[];
    if (others.length === 0) continue;
    app.route({
      method: others,
      url,
      // Outside the API's own error space: no auth needed to learn which methods a path takes.
      // In onRequest, so that a body method without a body or Content-Type (QUERY) still gets 405, not 400.
      onRequest: async (req, reply) => methodNotAllowed(req, reply, allow),
      handler: async (req, reply) => methodNotAllowed(req, reply, allow),
    });
  }
}

const SERVED = new WeakMap<FastifyInstance, AllowedMethods>();

/** Remembers the Allow table of an app, for {@link servedRoutes}. */
export function trackServedRoutes(app: FastifyInstance, allowed: AllowedMethods): void {
  SERVED.set(app, allowed);
}

/**
 * Every path an app built by buildApp serves, with its methods (after `ready()`): what
 * /openapi.json must describe, or name as deliberately left out.
 */
export function servedRoutes(app: FastifyInstance): ReadonlyMap<string, string[]> {
  return SERVED.get(app)?.served() ?? new Map();
}
