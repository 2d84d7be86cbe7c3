/**
 * API-key authentication with scopes (SPEC §7). Keys arrive as `Authorization: Bearer <key>`
 * or `X-API-Key: <key>`; unknown or missing keys get 401, a key without the scope 403.
 * With no keys configured the API is open — allowed only on loopback (see {@link assertSafeExposure}).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLoopback, type ApiKey, type ApiScope } from '../platform/config.ts';
import { AppError } from '../platform/errors.ts';

function presentedKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization;
  if (typeof auth === 'string' && auth.toLowerCase().startsWith('bearer ')) return auth.slice(7).trim();
  const x = headers['x-api-key'];
  return typeof x === 'string' ? x.trim() : undefined;
}

function sameKey(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Whether the key of a request's headers carries `scope`: the refusal (status and body) when not. */
export type Admission = { ok: true } | { ok: false; status: 401 | 403; body: { error: string; message: string }; /** no key at all: answer with a Bearer challenge */ challenge: boolean };

/** Judges a request's key against the configured keys (no keys configured = open). */
export function admit(keys: ApiKey[], headers: IncomingHttpHeaders, scope: ApiScope): Admission {
  if (keys.length === 0) return { ok: true };
  const presented = presentedKeyOf(headers);
  if (!presented) return { ok: false, status: 401, body: { error: 'unauthorized', message: 'an API key is required' }, challenge: true };
  const key = keys.find((k) => sameKey(k.key, presented));
  if (!key) return { ok: false, status: 401, body: { error: 'unauthorized', message: 'unknown API key' }, challenge: false };
  if (!key.scopes.includes(scope)) return { ok: false, status: 403, body: { error: 'forbidden', message: `this key lacks the '${scope}' scope` }, challenge: false };
  return { ok: true };
}

/** A fastify preHandler that admits requests whose key carries `scope`. */
export function requireScope(keys: ApiKey[], scope: ApiScope) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const a = admit(keys, req.headers, scope);
    if (a.ok) return;
    if (a.challenge) reply.header('www-authenticate', 'Bearer');
    await reply.code(a.status).send(a.body);
  };
}

/**
 * Which key made a request, for records that outlive it (quarantine replays): `key:` and the
 * first 12 hex digits of the key's SHA-256 — never the key itself — or `open` without keys.
 */
export function keyIdOf(req: FastifyRequest, keys: ApiKey[]): string {
  return keyIdOfHeaders(req.headers, keys);
}

/** {@link keyIdOf} from a request's headers (a listener without fastify). */
export function keyIdOfHeaders(headers: IncomingHttpHeaders, keys: ApiKey[]): string {
  const presented = presentedKeyOf(headers);
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
