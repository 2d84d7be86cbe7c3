/**
 * Per-client rate limiting of the read API: a token bucket per API key (or per IP address when
 * the API is open on loopback), refilled continuously. A request without a token gets 429 with
 * Retry-After. Buckets live in memory, per process; the least recently used are forgotten past
 * a bound, so a flood of distinct clients cannot grow memory.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Settings of {@link createRateLimiter}. */
export interface RateLimitOptions {
  /** Sustained requests per minute per client; 0 turns limiting off. */
  perMinute: number;
  /** Requests a client may make at once after being idle. */
  burst: number;
  /** Buckets kept at most (default 10 000). */
  maxClients?: number;
  /** Clock in ms (tests). */
  now?: () => number;
  /**
   * Whether requests are authenticated by API keys (then buckets are per key). Without keys a
   * presented "key" proves nothing, and buckets are per IP address.
   */
  perKey?: boolean;
}

interface Bucket {
  tokens: number;
  at: number;
}

function clientOf(req: FastifyRequest, perKey: boolean): string {
  if (!perKey) return `ip:${req.ip}`;
  // Runs after authentication, so a presented key is a valid one; hash it so keys never sit in memory twice.
  const auth = req.headers.authorization;
  const key = typeof auth === 'string' && auth.toLowerCase().startsWith('bearer ') ? auth.slice(7).trim() : req.headers['x-api-key'];
  if (typeof key === 'string' && key !== '') return `key:${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
  return `ip:${req.ip}`;
}

/** A fastify preHandler enforcing the limit. */
export function createRateLimiter(opts: RateLimitOptions) {
  const buckets = new Map<string, Bucket>();
  const max = opts.maxClients ?? 10_000;
  const now = opts.now ?? Date.now;
  const perMs = opts.perMinute / 60_000;
  const burst = Math.max(1, opts.burst);

  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (opts.perMinute <= 0) return;
    const id = clientOf(req, opts.perKey ?? true);
    const t = now();
    const b = buckets.get(id) ?? { tokens: burst, at: t };
    buckets.delete(id); // re-inserted below: Map order is recency order
    b.tokens = Math.min(burst, b.tokens + (t - b.at) * perMs);
    b.at = t;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    buckets.set(id, b);
    if (buckets.size > max) buckets.delete(buckets.keys().next().value as string);
    void reply.header('x-ratelimit-limit', String(opts.perMinute)).header('x-ratelimit-remaining', String(Math.floor(b.tokens)));
    if (!allowed) {
      const retryAfter = Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
      await reply
        .code(429)
        .header('retry-after', String(retryAfter))
        .send({ error: 'too_many_requests', message: `rate limit of ${opts.perMinute} requests per minute exceeded; retry in ${retryAfter} s` });
    }
  };
}
