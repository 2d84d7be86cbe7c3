/**
 * How a `tools/call` ended, in the terms of a tool_call packet (pure). MCP has three ways to
 * fail a call — a result with `isError`, a JSON-RPC error, a cancellation — and our packet has
 * five statuses; this is the one place that maps them.
 */
import { createHash } from 'node:crypto';
import type { ToolStatus } from '../../schemas/vocabulary.ts';
import type { RecordedContent } from '../packets.ts';
import { isObject } from './json-rpc.ts';

/** What the gateway records of one call's end. */
export interface CallOutcome {
  status: ToolStatus;
  error: string | null;
  resultSummary: Record<string, unknown>;
  content: RecordedContent | undefined;
}

// An error text longer than this is cut: the packet caps error, and a tool's error content can be a page.
const MAX_ERROR_CHARS = 4_000;

/** JSON-RPC's and MCP's codes for a request the server refused as malformed. */
const INVALID_INPUT_CODES = new Set([-32602 /* invalid params */, -32600 /* invalid request */]);
/** MCP's RequestTimeout. */
const TIMEOUT_CODE = -32001;

type Block = Record<string, unknown> & { type?: unknown };

/** The outcome of a `tools/call` answered with a result. */
export function resultOutcome(result: unknown): CallOutcome {
  const r = (isObject(result) ? result : {}) as { content?: unknown; structuredContent?: unknown; isError?: unknown };
  const blocks = Array.isArray(r.content) ? (r.content as unknown[]).filter(isObject) : [];
  const types: Record<string, number> = {};
  let textChars = 0;
  for (const b of blocks as Block[]) {
    const t = typeof b.type === 'string' ? b.type : 'unknown';
    types[t] = (types[t] ?? 0) + 1;
    if (typeof b.text === 'string') textChars += b.text.length;
  }
  const structured = isObject(r.structuredContent);
  const resultSummary: Record<string, unknown> = { mcp_content_blocks: blocks.length, mcp_content_types: types, text_chars: textChars, structured };
  if (r.isError === true) {
    const text = textOf(blocks as Block[]);
    return { status: 'error', error: clip(text === '' ? 'the tool answered isError without text' : text), resultSummary, content: undefined };
  }
  return { status: 'success', error: null, resultSummary, content: contentOf(blocks as Block[], structured ? r.structuredContent : undefined) };
}

/** The outcome of a `tools/call` answered with a JSON-RPC error. */
export function errorOutcome(error: unknown): CallOutcome {
  const e = (isObject(error) ? error : {}) as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'number' ? e.code : null;
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : 'JSON-RPC error';
  const status: ToolStatus = code === TIMEOUT_CODE ? 'timeout' : code !== null && INVALID_INPUT_CODES.has(code) ? 'invalid_input' : 'error';
  return { status, error: clip(`JSON-RPC error ${code ?? '?'}: ${message}`), resultSummary: { jsonrpc_error_code: code }, content: undefined };
}

/**
 * The outcome of a call the client cancelled (`notifications/cancelled`). The SDKs cancel with a
 * reason naming a timeout when their request timeout fires: that is our `timeout`.
 */
export function cancelOutcome(reason: unknown): CallOutcome {
  const text = typeof reason === 'string' && reason !== '' ? reason : 'no reason given';
  const timedOut = /timed? ?out|-32001/i.test(text);
  return { status: timedOut ? 'timeout' : 'error', error: clip(`cancelled by the client: ${text}`), resultSummary: { cancelled: true }, content: undefined };
}

/** The outcome of a call whose answer never came (the upstream or the gateway went away). */
export function lostOutcome(why: string): CallOutcome {
  return { status: 'error', error: clip(why), resultSummary: { answered: false }, content: undefined };
}

/**
 * The output artifact of a successful call: structured content as json; text blocks alone as
 * text; anything else as json of the blocks with images, audio and embedded blobs replaced by
 * their sha256 and size (the artifact records what was returned, not a copy of every byte).
 */
function contentOf(blocks: Block[], structured: unknown): RecordedContent | undefined {
  if (structured !== undefined) return { text: JSON.stringify(structured), contentType: 'json', embed: true };
  if (blocks.length === 0) return undefined;
  if (blocks.every((b) => b.type === 'text' && typeof b.text === 'string')) {
    const text = textOf(blocks);
    return text === '' ? undefined : { text, contentType: 'text', embed: false };
  }
  return { text: JSON.stringify(blocks.map(digestBlock)), contentType: 'json', embed: true };
}

function digestBlock(b: Block): Block {
  if (typeof b.data === 'string') return { ...withoutKey(b, 'data'), ...digest(b.data) };
  const resource = b.resource;
  if (isObject(resource) && typeof resource.blob === 'string') return { ...b, resource: { ...withoutKey(resource, 'blob'), ...digest(resource.blob) } };
  return b;
}

function digest(base64: string): { sha256: string; size_bytes: number } {
  const bytes = Buffer.from(base64, 'base64');
  return { sha256: createHash('sha256').update(bytes).digest('hex'), size_bytes: bytes.length };
}

function withoutKey(o: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = o;
  return rest;
}

function textOf(blocks: Block[]): string {
  return blocks
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

function clip(s: string): string {
  return s.length > MAX_ERROR_CHARS ? `${s.slice(0, MAX_ERROR_CHARS)}…` : s;
}
