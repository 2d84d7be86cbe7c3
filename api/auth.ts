/**
 * API-key authentication with scopes (SPEC §7). Keys arrive as `Authorization: Bearer <key>`
 * or `X-API-Key: <key>`; unknown or missing keys get 401, a key without the scope 403.
 * With no keys configured the API is open — allowed only on loopback (see {@link assertSafeExposure}).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLoopback, type ApiKey, type ApiScope } from '../platform/config.ts';
import { AppError } from '../platform/errors.ts';

function presentedKey(req: FastifyRequest): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.toLowerCase().startsWith('bearer ')) return auth.slice(7).trim();
  const x = req.headers['x-api-key'];
  return typeof x === 'string' ? x.trim() : undefined;
}

function sameKey(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A fastify preHandler that admits requests whose key carries `scope`. */
export function requireScope(keys: ApiKey[], scope: ApiScope) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (keys.length === 0) return;
    const presented = presentedKey(req);
    if (!presented) {
      await reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'unauthorized', message: 'an API key is required' });
      return;
    }
    const key = keys.find((k) => sameKey(k.key, presented));
    if (!key) {
      await reply.code(401).send({ error: 'unauthorized', message: 'unknown API key' });
      return;
    }
    if (!key.scopes.includes(scope)) {
      await reply.code(403).send({ error: 'forbidden', message: `this key lacks the '${scope}' scope` });
    }
  };
}

/**
 * Which key made a request, for records that outlive it (quarantine replays): `key:` and the
 * first 12 hex digits of the key's SHA-256 — never the key itself — or `open` without keys.
 */
export function keyIdOf(req: FastifyRequest, keys: ApiKey[]): string {
  const presented = presentedKey(req);
  if (keys.length === 0 || !presented) return 'open';
  return `key:${createHash('sha256').update(presented).digest('hex').slice(0, 12)}`;
}

/**
 * Refuses to serve beyond loopback without API keys. `loadConfig(env, { serving: true })` reports
 * the same beside every other offence at start; this guards apps built from other configs.
 */
export function assertSafeExposure(host: string, keys: ApiKey[]): void {
  if (keys.length === 0 && !isLoopback(host)) {
    throw new AppError('CONFIG_INVALID', `HOST=${host} is reachable beyond loopback: set TOOL_AUDIT_API_KEYS (keys with scopes ingest/read)`, {
      retryable: false,
    });
  }
}
