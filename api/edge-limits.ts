/**
 * Limits in front of every route, before authentication, so that no route — 401s included — can
 * be hammered: a token bucket per client (its key, or its address without one) over all requests,
 * and a bucket per address of failed authentications. An address that spent its failures is
 * answered 429 on every route until one refills — before its key is even looked at, so a key
 * guessed right during the lock-out is not confirmed. The read routes keep their own, stricter
 * limit per key (rate-limit.ts) as well.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clientOf, TokenBuckets } from './rate-limit.ts';

/** Settings of {@link registerEdgeLimits}; a limit of 0 per minute is off. */
export interface EdgeLimitOptions {
  /** Requests per minute per client (key, or address without one), on every route. */
  perMinute: number;
  /** Requests a client may make at once after being idle. */
  burst: number;
  /** Failed authentications (401) per minute per address; as many at once. */
  authFailuresPerMinute: number;
  /** Clock in ms (tests). */
  now?: () => number;
}

/** Adds the edge's limits to every route of `app`. */
export function registerEdgeLimits(app: FastifyInstance, opts: EdgeLimitOptions): void {
  const requests = new TokenBuckets(opts.perMinute, opts.burst, 10_000, opts.now);
  const failures = new TokenBuckets(opts.authFailuresPerMinute, opts.authFailuresPerMinute, 10_000, opts.now);
  const refuse = (req: FastifyRequest, reply: FastifyReply, retryAfterS: number, why: string) =>
    reply.code(429).header('retry-after', String(retryAfterS)).send({ error: 'too_many_requests', message: `${why}; retry in ${retryAfterS} s`, request_id: req.id });
  app.addHook('onRequest', async (req, reply) => {
    if (opts.authFailuresPerMinute > 0) {
      const f = failures.peek(`ip:${req.ip}`);
      if (!f.allowed) return refuse(req, reply, f.retryAfterS, `too many failed authentications from this address (limit ${opts.authFailuresPerMinute} per minute)`);
    }
    if (opts.perMinute > 0) {
      const r = requests.take(clientOf(req, true));
      if (!r.allowed) return refuse(req, reply, r.retryAfterS, `rate limit of ${opts.perMinute} requests per minute exceeded`);
    }
  });
  app.addHook('onResponse', async (req, reply) => {
    if (opts.authFailuresPerMinute > 0 && reply.statusCode === 401) failures.take(`ip:${req.ip}`);
  });
}
