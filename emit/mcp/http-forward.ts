/**
 * How the HTTP gateway forwards a request: the end-to-end headers (every header but the
 * hop-by-hop ones) both ways, and the body as read or streamed, to the upstream MCP endpoint.
 */
import { request as httpRequest, type Agent as HttpAgent, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';

// RFC 9110 §7.6.1: meaningful for one connection only, never forwarded.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate']);

/** The client's request headers to send upstream: not hop-by-hop ones, not host, nor those in `drop`. */
export function requestHeaders(req: IncomingMessage, drop: readonly string[] = []): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && name !== 'host' && !drop.includes(name) && value !== undefined) headers[name] = value;
  return headers;
}

/** Sends the request upstream with its body: the bytes read, or the request itself streamed. */
export function forward(req: IncomingMessage, body: Buffer | IncomingMessage, upstream: URL, agent: HttpAgent): Promise<IncomingMessage> {
  const headers = requestHeaders(req);
  if (Buffer.isBuffer(body) && (body.length > 0 || req.headers['content-length'] !== undefined)) headers['content-length'] = body.length;
  const target = new URL(upstream);
  const incoming = new URL(req.url ?? '/', 'http://gateway');
  if (incoming.search) target.search = incoming.search;
  return sendUpstream(target, { method: req.method ?? 'GET', headers, agent }, body);
}

/** One request to the upstream (http or https by its URL), its body written whole or piped; resolves with the answer's head. */
export function sendUpstream(target: URL, options: { method: string; headers: OutgoingHttpHeaders; agent: HttpAgent }, body: Buffer | IncomingMessage): Promise<IncomingMessage> {
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const out = send(target, options, resolve);
    out.once('error', reject);
    if (Buffer.isBuffer(body)) out.end(body);
    else body.pipe(out);
  });
}

/** The upstream answer's headers to send back: not the hop-by-hop ones. */
export function endToEnd(headers: IncomingMessage['headers']): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
  return out;
}

/** The request's body, or undefined when it is longer than `max` bytes. */
export async function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** A header's value when present and not empty. */
export function headerOf(m: IncomingMessage, name: string): string | undefined {
  const v = m.headers[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}
