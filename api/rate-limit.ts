/**
 * Per-client rate limiting: a token bucket per API key (or per IP address when the API is open on
 * loopback), refilled continuously. A request without a token gets 429 with Retry-After. Buckets
 * live in memory, per process; the least recently used are forgotten past a bound, so a flood of
 * distinct clients cannot grow memory. The read routes have their own limit; every route shares
 * the edge's (edge-limits.ts).
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

/**
 * Token buckets by client id, refilled continuously at `perMinute` up to `burst`; the least
 * recently used forgotten past `max`, so a flood of distinct clients cannot grow memory.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private readonly burst: number;

  constructor(
    perMinute: number,
    burst: number,
    private readonly max = 10_000,
    private readonly now: () => number = Date.now,
  ) {
    this.perMs = perMinute / 60_000;
    this.burst = Math.max(1, burst);
  }

  private refilled(id: string): Bucket {
    const t = this.now();
    const b = this.buckets.get(id) ?? { tokens: this.burst, at: t };
    this.buckets.delete(id); // re-inserted by the caller: Map order is recency order
    b.tokens = Math.min(this.burst, b.tokens + (t - b.at) * this.perMs);
    b.at = t;
    return b;
  }

  private keep(id: string, b: Bucket): void {
    this.buckets.set(id, b);
    if (this.buckets.size > this.max) this.buckets.delete(this.buckets.keys().next().value as string);
  }

  /** Takes a token when there is one: whether it was taken, what is left, and seconds until the next. */
  take(id: string): { allowed: boolean; remaining: number; retryAfterS: number } {
    const b = this.refilled(id);
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.keep(id, b);
    return { allowed, remaining: Math.floor(b.tokens), retryAfterS: this.retryAfter(b) };
  }

  /** Whether a client has a token now, without taking it (and seconds until it has one). */
  peek(id: string): { allowed: boolean; retryAfterS: number } {
    const b = this.refilled(id);
    this.keep(id, b);
    return { allowed: b.tokens >= 1, retryAfterS: this.retryAfter(b) };
  }

  private retryAfter(b: Bucket): number {
    return b.tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / this.perMs / 1000));
  }
}

/** The bucket of a request: its key's (hashed, never kept in clear) or, without one, its address's. */
export function clientOf(req: Pick<FastifyRequest, 'headers' | 'ip'>, perKey: boolean): string {
  if (!perKey) return `ip:${req.ip}`;
  // Hashed, so keys never sit in memory twice. Before authentication (the edge's limit) a wrong key
  // gets a bucket of its own, and its 401 counts against its address (edge-limits.ts).
  const auth = req.headers.authorization;
  const key = typeof auth === 'string' && auth.toLowerCase().startsWith('bearer ') ? auth.slice(7).trim() : req.headers['x-api-key'];
  if (typeof key === 'string' && key !== '') return `key:${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
  return `ip:${req.ip}`;
}

/** A fastify preHandler enforcing the limit. */
export function createRateLimiter(opts: RateLimitOptions) {
  const buckets = new TokenBuckets(opts.perMinute, opts.burst, opts.maxClients, opts.now);
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (opts.perMinute <= 0) return;
    const b = buckets.take(clientOf(req, opts.perKey ?? true));
    void reply.header('x-ratelimit-limit', String(opts.perMinute)).header('x-ratelimit-remaining', String(b.remaining));
    if (!b.allowed) {
      await reply
        .code(429)
        .header('retry-after', String(b.retryAfterS))
        .send({ error: 'too_many_requests', message: `rate limit of ${opts.perMinute} requests per minute exceeded; retry in ${b.retryAfterS} s`, request_id: req.id });
    }
  };
}
