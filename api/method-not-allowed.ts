/**
 * 405 Method Not Allowed, with `Allow`, for a method a route does not take (RFC 9110 §15.5.6),
 * instead of fastify's 404: a client (or a fuzzer reading /openapi.json) learns the path exists
 * and what it takes. Routes are collected as they are registered; `answerOtherMethods` then
 * registers, for each path, one route taking every other method. HEAD is allowed where GET is
 * (fastify answers it from the GET route, as RFC 9110 §9.3.2 expects).
 */
import type { FastifyInstance, HTTPMethods } from 'fastify';

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

/** Registers a 405 answer for every method each collected path does not take. Call after the last route. */
export function answerOtherMethods(app: FastifyInstance, byUrl: Map<string, Set<string>>): void {
  for (const [url, methods] of [...byUrl]) {
    if (methods.has('GET')) methods.add('HEAD');
    const allow = [...methods].sort().join(', ');
    const others = app.supportedMethods.filter((m) => !methods.has(m)) as HTTPMethods[];
    if (others.length === 0) continue;
    app.route({
      method: others,
      url,
      // Outside the API's own error space: no auth needed to learn which methods a path takes.
      handler: async (req, reply) =>
        reply
          .code(405)
          .header('allow', allow)
          .send({ error: 'method_not_allowed', message: `${req.method} is not allowed here; allowed: ${allow}`, request_id: req.id }),
    });
  }
}
