/**
 * The Streamable HTTP gateway: a reverse proxy in front of one remote MCP endpoint. Requests
 * and answers pass byte for byte, headers included (auth, `Mcp-Session-Id`, `Last-Event-ID`),
 * bar the hop-by-hop ones; SSE streams are streamed through as they come. A copy of each body
 * is parsed for the audit: request bodies whole, JSON answers whole, SSE answers event by
 * event. Sessions are told apart by `Mcp-Session-Id`; each is an AuditSession whose task is the
 * session id.
 */
import { Agent as HttpAgent, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { PassThrough, type Transform } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { createParser } from 'eventsource-parser';
import type { MinimalLogger } from '../../platform/minimal-logger.ts';
import { exactOf, type AuditSession } from './audit-session.ts';
import { refusalResponse, type CallGuard } from './call-guard.ts';
import { endToEnd, forward, headerOf, readBody, requestHeaders, sendUpstream } from './http-forward.ts';
import { HttpSessions } from './http-sessions.ts';
import { batchRefusal, batchWithCall, isObject, isToolsCall } from './json-rpc.ts';
import { listResult, OWN_ID_PREFIX, PIN_LIST_TIMEOUT_MS, type ToolsListAsker } from './own-requests.ts';

/** What the HTTP gateway runs with. */
export interface HttpGatewayOptions {
  upstream: URL;
  /** A new session's audit state; `taskId` is its Mcp-Session-Id (or one id per gateway without). */
  newSession: (taskId: string) => AuditSession;
  guard: CallGuard | undefined;
  logger: MinimalLogger;
  /** Largest request body read (default 32 MiB): larger ones get 413. */
  maxBodyBytes?: number;
}

/** A running HTTP gateway. */
export interface HttpGateway {
  readonly server: Server;
  /** Sessions known, by Mcp-Session-Id. */
  readonly sessions: HttpSessions;
  close(): Promise<void>;
}

const SESSION_HEADER = 'mcp-session-id';
// Connections to the upstream are kept and reused, and small writes are not held back (Nagle):
// a call is a few hundred bytes each way, and its latency is the product.
const AGENT_OPTIONS = { keepAlive: true, noDelay: true, maxFreeSockets: 64 };

/** Builds the gateway's HTTP server (not listening yet). */
export function createHttpGateway(o: HttpGatewayOptions): HttpGateway {
  const sessions = new HttpSessions(o.newSession);
  const agent = o.upstream.protocol === 'https:' ? new HttpsAgent(AGENT_OPTIONS) : new HttpAgent(AGENT_OPTIONS);
  const server = createServer((req, res) => {
    handle(req, res, { ...o, agent }, sessions).catch((err: unknown) => {
      o.logger.error({ err: (err as Error).message }, 'the gateway failed a request');
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'bad_gateway', message: (err as Error).message }));
    });
  });
  return {
    server,
    sessions,
    close: () =>
      new Promise<void>((resolve) => {
        sessions.closeAll('the gateway stopped before the answer');
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, o: HttpGatewayOptions & { agent: HttpAgent }, sessions: HttpSessions): Promise<void> {
  const max = o.maxBodyBytes ?? 32 * 1024 * 1024;
  const sessionId = headerOf(req, SESSION_HEADER);
  if (Number(req.headers['content-length'] ?? 0) > max) return passLarge(req, res, o, max);
  const body = await readBody(req, max);
  if (body === undefined) {
    res.writeHead(413, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'body_too_large', message: `a body without Content-Length over ${max} bytes` }));
    return;
  }
  const raw = req.method === 'POST' ? body.toString('utf8') : '';
  const msg = raw !== '' ? parseJson(raw) : undefined;
  // A request naming a session is audited in it; one without, in a session of its own (an
  // initialize), or in a fork of a session-less server's template.
  const { session, fork } = sessionId !== undefined ? { session: sessions.of(sessionId), fork: false } : sessions.anonymous();
  if (msg !== undefined) {
    const refused = o.guard ? await judge(msg, raw, session, o.guard, o.logger, (params) => askUpstream(req, o.upstream, o.agent, params)) : undefined;
    if (refused) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(refused));
      if (fork) sessions.done(session);
      return;
    }
    if (!(o.guard && isToolsCall(msg))) session.fromClient(msg, raw);
  }
  const calls = callIdsOf(msg);
  let upstream: IncomingMessage;
  try {
    upstream = await forward(req, body, o.upstream, o.agent);
  } catch (err) {
    session.endCalls(calls, `the MCP server could not be reached: ${(err as Error).message}`);
    if (fork) sessions.done(session);
    throw err;
  }
  const status = upstream.statusCode ?? 502;
  if (sessionId === undefined && !fork && isInitialize(msg) && status < 300) sessions.initialized(session, headerOf(upstream, SESSION_HEADER));
  res.writeHead(status, endToEnd(upstream.headers));
  res.flushHeaders();
  tee(upstream, res, session, () => session.endCalls(calls, `the answer was over ${max} bytes: too large to audit`), max);
  // The client went away mid-answer (a dropped SSE stream): so does the upstream stream.
  res.once('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  upstream.once('end', () => {
    // An HTTP error is the answer: the calls it carried will get no JSON-RPC response.
    if (status >= 400) session.endCalls(calls, `the MCP server answered HTTP ${status}`);
    if (fork) sessions.done(session);
    if (sessionId !== undefined && (status === 404 || (req.method === 'DELETE' && status < 300))) sessions.end(sessionId, status === 404 ? 'the MCP server no longer knows the session' : 'the session was deleted before the answer');
  });
}

/** A request too large to hold: streamed through, its calls unaudited; refused while enforcing (it could not be judged). */
async function passLarge(req: IncomingMessage, res: ServerResponse, o: HttpGatewayOptions & { agent: HttpAgent }, max: number): Promise<void> {
  const bytes = Number(req.headers['content-length']);
  if (o.guard) {
    o.logger.warn({ bytes, max }, 'a request too large to judge was refused');
    res.writeHead(413, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'body_too_large', message: `over ${max} bytes: too large for the gateway to judge while it enforces a pin or budgets` }));
    return;
  }
  o.logger.warn({ bytes, max }, 'a request too large to audit passed through unaudited');
  const upstream = await forward(req, req, o.upstream, o.agent);
  res.writeHead(upstream.statusCode ?? 502, endToEnd(upstream.headers));
  upstream.pipe(res);
  res.once('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
}

/** The ids of the tools/call requests a message (or batch) carries. */
function callIdsOf(msg: unknown): Array<string | number> {
  const all = Array.isArray(msg) ? msg : [msg];
  return all.filter(isToolsCall).map((m) => m.id);
}

function isInitialize(msg: unknown): boolean {
  return (msg as { method?: unknown } | null)?.method === 'initialize';
}

/** A refusal to answer in place of forwarding, or undefined to forward. Tracks an admitted call. */
async function judge(msg: unknown, raw: string, session: AuditSession, guard: CallGuard, logger: MinimalLogger, ask: ToolsListAsker): Promise<unknown> {
  if (batchWithCall(msg)) return batchRefusal(msg);
  if (!isToolsCall(msg)) return undefined;
  let described;
  let a;
  try {
    // Under a pin the live definitions are known before the call is judged (fail closed). Over
    // HTTP the server's list_changed comes on a stream of its own, in no order with the answers
    // to calls, so a list seen before is never trusted: each call is judged on a fresh list
    // (calls judged at once share it).
    if (guard.pinned) {
      session.forgetList();
      await session.ensureListed(ask, PIN_LIST_TIMEOUT_MS).catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'the live tool definitions could not be listed'));
    }
    described = session.describe(msg, exactOf(raw));
    a = await guard(described, session.announced);
  } catch (err) {
    logger.error({ err: (err as Error).message }, 'the call guard failed; the call is let through');
    a = { ok: true as const, callId: undefined };
  }
  if (a.ok) {
    if (described) session.track(msg, described, a.callId);
    return undefined;
  }
  logger.warn({ tool: (msg.params as { name?: unknown } | undefined)?.name, reason: a.reason }, a.message);
  return refusalResponse(msg.id, a);
}

/** Streams the answer to the client while the audit reads a copy (decompressed when it is compressed). */
function tee(upstream: IncomingMessage, res: ServerResponse, session: AuditSession, tooLarge: () => void, max: number): void {
  const type = String(upstream.headers['content-type'] ?? '');
  const copy = auditCopy(String(upstream.headers['content-encoding'] ?? 'identity').trim().toLowerCase());
  const decoder = new StringDecoder('utf8');
  let onData: ((chunk: Buffer) => void) | undefined;
  let onEnd: (() => void) | undefined;
  if (copy && type.startsWith('text/event-stream')) {
    const parser = createParser({ onEvent: (e) => auditJson(e.data, session) });
    onData = (chunk) => parser.feed(decoder.write(chunk));
  } else if (copy && type.startsWith('application/json')) {
    // The copy is bounded as requests are: past `max`, the answer passes on unaudited.
    let chunks: Buffer[] | undefined = [];
    let size = 0;
    onData = (chunk) => {
      size += chunk.length;
      if (size > max) chunks = undefined;
      else chunks?.push(chunk);
    };
    onEnd = () => (chunks ? auditJson(Buffer.concat(chunks).toString('utf8'), session) : tooLarge());
  }
  if (copy && onData) {
    copy.on('data', onData);
    copy.once('end', () => onEnd?.());
    // A copy that cannot be decompressed is not audited; the client still gets every byte.
    copy.once('error', () => undefined);
  }
  upstream.on('data', (chunk: Buffer) => {
    res.write(chunk);
    if (onData) copy?.write(chunk);
  });
  upstream.once('end', () => {
    res.end();
    if (onData) copy?.end();
  });
  upstream.once('error', () => res.destroy());
}

/** Where the audit's copy of an answer goes: as is, or through zlib; undefined for an encoding zlib does not know. */
function auditCopy(encoding: string): Transform | undefined {
  if (encoding === 'identity' || encoding === '') return new PassThrough();
  if (encoding === 'gzip' || encoding === 'x-gzip') return createGunzip();
  if (encoding === 'deflate') return createInflate();
  if (encoding === 'br') return createBrotliDecompress();
  return undefined;
}

function auditJson(text: string, session: AuditSession): void {
  if (text === '') return;
  try {
    session.fromServer(JSON.parse(text));
  } catch {
    // Not JSON: passed through, not audited.
  }
}

let ownSeq = 0;

/**
 * A tools/list of the gateway's own, in the session of the client's request (its Mcp-Session-Id,
 * protocol version and credentials): answered on its own HTTP response, never the client's. The
 * answer is read as JSON or as an event stream, up to the message with its id.
 */
async function askUpstream(req: IncomingMessage, upstream: URL, agent: HttpAgent, params: Record<string, unknown>): Promise<unknown> {
  const id = `${OWN_ID_PREFIX}${++ownSeq}`;
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params }));
  // The client's session, protocol version and credentials; a body, encoding and stream position of its own.
  const headers = { ...requestHeaders(req, ['content-length', 'accept-encoding', 'last-event-id']), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': body.length };
  const res = await sendUpstream(new URL(upstream), { method: 'POST', headers, agent }, body);
  if ((res.statusCode ?? 500) >= 300) {
    res.resume();
    throw new Error(`tools/list answered HTTP ${res.statusCode}`);
  }
  const answer = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const take = (text: string): boolean => {
      const m = parseJson(text);
      const found = (Array.isArray(m) ? m : [m]).find((x) => isObject(x) && x.id === id);
      if (isObject(found)) resolve(found);
      return isObject(found);
    };
    const decoder = new StringDecoder('utf8');
    if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
      const parser = createParser({ onEvent: (e) => void (take(e.data) && res.destroy()) });
      res.on('data', (chunk: Buffer) => parser.feed(decoder.write(chunk)));
      res.once('end', () => reject(new Error('the event stream ended without the tools/list answer')));
    } else {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += decoder.write(chunk)));
      res.once('end', () => void (take(text) || reject(new Error('the answer holds no tools/list result'))));
    }
    res.once('error', reject);
  });
  return listResult(answer);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
