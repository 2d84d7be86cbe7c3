/**
 * Limits in front of every route, before authentication, so that no route — 401s included — can
 * be hammered: a token bucket per client (its key, or its address without one) over all requests,
 * and a bucket per address of failed authentications. An address that spent its failures is
 * answered 429 on every route until one refills — before its key is even looked at, so a key
 * guessed right during the lock-out is not confirmed. The read routes keep their own, stricter
 * limit per key (rate-limit.ts) as well.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
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

/** Why a request is refused at the edge (429), and when to come back. */
export interface EdgeRefusal {
  retryAfterS: number;
  message: string;
}

/** The edge's buckets apart from any server: the main port's hooks and the budget-check listener share it. */
export interface EdgeGate {
  /** Before authentication: undefined lets the request in; a refusal answers it 429. */
  admit(req: Pick<FastifyRequest, 'headers' | 'ip'>): EdgeRefusal | undefined;
  /** After a 401: counts a failed authentication against the address. */
  failed(ip: string): void;
}

/** The edge's limits as a gate (a limit of 0 is off). */
export function createEdgeGate(opts: EdgeLimitOptions): EdgeGate {
  const requests = new TokenBuckets(opts.perMinute, opts.burst, 10_000, opts.now);
  const failures = new TokenBuckets(opts.authFailuresPerMinute, opts.authFailuresPerMinute, 10_000, opts.now);
  const refusal = (retryAfterS: number, why: string): EdgeRefusal => ({ retryAfterS, message: `${why}; retry in ${retryAfterS} s` });
  return {
    admit(req) {
      if (opts.authFailuresPerMinute > 0) {
        const f = failures.peek(`ip:${req.ip}`);
        if (!f.allowed) return refusal(f.retryAfterS, `too many failed authentications from this address (limit ${opts.authFailuresPerMinute} per minute)`);
      }
      if (opts.perMinute > 0) {
        const r = requests.take(clientOf(req, true));
        if (!r.allowed) return refusal(r.retryAfterS, `rate limit of ${opts.perMinute} requests per minute exceeded`);
      }
      return undefined;
    },
    failed(ip) {
      if (opts.authFailuresPerMinute > 0) failures.take(`ip:${ip}`);
    },
  };
}

/** Adds the edge's limits to every route of `app`. */
export function registerEdgeLimits(app: FastifyInstance, opts: EdgeLimitOptions): void {
  const gate = createEdgeGate(opts);
  app.addHook('onRequest', async (req, reply) => {
    const refused = gate.admit(req);
    if (refused) return reply.code(429).header('retry-after', String(refused.retryAfterS)).send({ error: 'too_many_requests', message: refused.message, request_id: req.id });
  });
  app.addHook('onResponse', async (req, reply) => {
    if (reply.statusCode === 401) gate.failed(req.ip);
  });
}
