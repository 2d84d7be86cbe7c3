/**
 * JSON-RPC message predicates the gateway's parts share (pure): what an object, an id and a
 * tools/call are, and the answer to a batch refused whole.
 */

/** A JSON-RPC request id. */
export type Id = string | number;

/** A JSON object (not an array, not null). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A usable request id. */
export function isId(v: unknown): v is Id {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

/** A single tools/call request. */
export function isToolsCall(msg: unknown): msg is Record<string, unknown> & { id: Id } {
  return isObject(msg) && msg.method === 'tools/call' && isId(msg.id);
}

/** A message, or a batch, holding a tools/call request. */
export function hasCall(msg: unknown): boolean {
  return Array.isArray(msg) ? msg.some(isToolsCall) : isToolsCall(msg);
}

/** A JSON-RPC batch holding a tools/call (batches left MCP in 2025-06-18; a guard refuses them whole). */
export function batchWithCall(msg: unknown): msg is unknown[] {
  return Array.isArray(msg) && msg.some(isToolsCall);
}

/** The errors answering every request of a batch refused whole. */
export function batchRefusal(batch: unknown[]): Record<string, unknown>[] {
  const message = 'the audit gateway refuses tools/call inside a JSON-RPC batch while it enforces a pin or budgets: send calls one per message';
  return batch.filter((m): m is { id: Id } => isObject(m) && isId(m.id)).map((m) => ({ jsonrpc: '2.0', id: m.id, error: { code: -32600, message } }));
}
