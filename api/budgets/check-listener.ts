/**
 * The dedicated budget-check listener (BUDGET_CHECK_PORT): `POST /v1/budget/check` on plain
 * node:http, served by the budget thread itself, so a check never waits behind the main thread's
 * other requests, its garbage collections or ClickHouse work (docs/manifests-budgets-hints.md "Budgets", the p99 figure).
 * Same keys, scope (`ingest`), body and answers as the route on the main port, and the same edge
 * limits before authentication (edge-limits.ts): requests per client, failed authentications per
 * address; nothing else is served here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKey } from '../../platform/config.ts';
import { budgetCheckRequestSchema, type BudgetCheckAnswer, type BudgetCheckRequest } from '../../queries/budgets/schemas.ts';
import { admit, keyIdOfHeaders } from '../auth.ts';
import { createEdgeGate, type EdgeLimitOptions } from '../edge-limits.ts';
import { issuesText } from '../read-params.ts';

/** A JSON body as a value: text is parsed (the packet routes' parser leaves bodies as text), a parsed body passes. */
export function jsonBody(body: unknown): { ok: true; value: unknown } | { ok: false; message: string } {
  if (typeof body !== 'string') return body === undefined ? { ok: false, message: 'send a JSON body (application/json)' } : { ok: true, value: body };
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch (err) {
    return { ok: false, message: `malformed JSON: ${(err as Error).message}` };
  }
}

/** A check body judged: the request, or why it was refused (400). */
export function judgeCheckBody(body: unknown): { ok: true; req: BudgetCheckRequest } | { ok: false; message: string } {
  const json = jsonBody(body);
  if (!json.ok) return json;
  const check = budgetCheckRequestSchema.safeParse(json.value);
  return check.success ? { ok: true, req: check.data } : { ok: false, message: issuesText(check.error) };
}

/** What the listener needs: the keys, a body limit, the edge's limits and the desk's check. */
export interface CheckListenerDeps {
  apiKeys: ApiKey[];
  maxBodyBytes: number;
  /** As on the main port (edge-limits.ts, its own count); a limit of 0 is off; absent: none. */
  edgeLimits?: EdgeLimitOptions;
  check(req: BudgetCheckRequest, keyId: string): BudgetCheckAnswer;
}

function send(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** The request handler of the dedicated listener. */
export function checkListener(deps: CheckListenerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  let seq = 0;
  const gate = deps.edgeLimits ? createEdgeGate(deps.edgeLimits) : undefined;
  return (req, res) => {
    const request_id = `check-${(++seq).toString(36)}`;
    // Before anything else, as the main port's edge does: an address that spent its failed
    // authentications, or a client over its rate, is answered 429 whatever it sends.
    const ip = req.socket.remoteAddress ?? '';
    const refused = gate?.admit({ headers: req.headers, ip });
    if (refused) {
      req.resume();
      return send(res, 429, { error: 'too_many_requests', message: refused.message, request_id }, { 'retry-after': String(refused.retryAfterS) });
    }
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/v1/budget/check') {
      req.resume();
      send(res, 404, { error: 'not_found', message: `no route ${req.method} ${path} on the budget-check port (only POST /v1/budget/check)`, request_id });
      return;
    }
    if (req.method !== 'POST') {
      req.resume();
      send(res, 405, { error: 'method_not_allowed', message: `${req.method} is not allowed here; allowed: POST`, request_id }, { allow: 'POST' });
      return;
    }
    const admission = admit(deps.apiKeys, req.headers, 'ingest');
    if (!admission.ok) {
      if (admission.status === 401) gate?.failed(ip);
      req.resume();
      send(res, admission.status, admission.body, admission.challenge ? { 'www-authenticate': 'Bearer' } : {});
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= deps.maxBodyBytes) chunks.push(c);
    });
    req.on('end', () => {
      if (size > deps.maxBodyBytes) return send(res, 413, { error: 'payload_too_large', message: `the body is over ${deps.maxBodyBytes} bytes`, request_id });
      const judged = judgeCheckBody(size === 0 ? undefined : Buffer.concat(chunks).toString('utf8'));
      if (!judged.ok) return send(res, 400, { error: 'bad_request', message: judged.message, request_id });
      send(res, 200, deps.check(judged.req, keyIdOfHeaders(req.headers, deps.apiKeys)));
    });
  };
}
