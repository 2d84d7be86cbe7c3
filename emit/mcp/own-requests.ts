/**
 * Requests the stdio gateway sends the server on its own (a pin's tools/list), with ids of its
 * own namespace so their answers are told from the client's and kept from it.
 */
import type { McpTool } from '../../schemas/mcp-tools.ts';
import { isObject } from './json-rpc.ts';
import { toolsOf } from './tool-definitions.ts';

/** How long a pin waits for the server's tools/list before the call is refused as unknown. */
export const PIN_LIST_TIMEOUT_MS = 10_000;
/** The prefix of the gateway's own request ids. */
export const OWN_ID_PREFIX = 'tool-audit-gateway/';

/** Sends one tools/list request of the gateway's own (its id apart from the client's) and resolves with its result. */
export type ToolsListAsker = (params: Record<string, unknown>) => Promise<unknown>;

/** Pages one own listing may take at most (a server that never ends its cursor). */
const MAX_LIST_PAGES = 100;

/** Every page of the server's tools/list, asked with the gateway's own requests. */
export async function listAllTools(ask: ToolsListAsker): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: unknown;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const result = await ask(cursor === undefined ? {} : { cursor });
    tools.push(...toolsOf(result));
    cursor = isObject(result) ? result.nextCursor : undefined;
    if (typeof cursor !== 'string') return tools;
  }
  throw new Error(`tools/list did not end within ${MAX_LIST_PAGES} pages`);
}

/** The result of an answer to the gateway's own tools/list; throws when the server answered an error. */
export function listResult(answer: Record<string, unknown>): unknown {
  if (answer.error !== undefined) throw new Error(`tools/list answered an error: ${JSON.stringify(answer.error).slice(0, 300)}`);
  return answer.result;
}

type Pending = { resolve: (answer: Record<string, unknown>) => void; reject: (err: Error) => void };

/** The gateway's own requests in flight. */
export class OwnRequests {
  private seq = 0;
  private readonly pending = new Map<string, Pending>();

  /** Sends a tools/list request with `params` through `send`; resolves with its result. */
  ask(params: Record<string, unknown>, send: (data: Buffer) => boolean): Promise<unknown> {
    const id = `${OWN_ID_PREFIX}${++this.seq}`;
    const answer = new Promise<Record<string, unknown>>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (!send(Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params })}\n`))) {
        this.pending.delete(id);
        reject(new Error("the MCP server's stdin is closed"));
      }
    });
    return answer.then(listResult);
  }

  /** Whether `msg` answers one of the gateway's own requests (then it is taken, not relayed). */
  answer(msg: unknown): boolean {
    if (!isObject(msg) || typeof msg.id !== 'string' || msg.method !== undefined) return false;
    const p = this.pending.get(msg.id);
    if (!p) return false;
    this.pending.delete(msg.id);
    p.resolve(msg);
    return true;
  }

  /** Ends every request in flight (the server is gone). */
  failAll(why: string): void {
    for (const p of this.pending.values()) p.reject(new Error(why));
    this.pending.clear();
  }
}
