/**
 * MCP tool definitions as the gateway judges them (pure): the hash that says whether a tool
 * was redefined, and the pinned set `--pin-manifest` refuses calls against.
 */
import { definitionHash, type McpTool } from '../../schemas/mcp-tools.ts';


/** The tools of a `tools/list` answer that have a string name; the rest are not tools. */
export function toolsOf(result: unknown): McpTool[] {
  const tools = (result as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools)) return [];
  return tools.filter((t): t is McpTool => typeof t === 'object' && t !== null && typeof (t as { name?: unknown }).name === 'string');
}

/** Why a call is refused under a pin, or null when the pin allows it. */
export type PinVerdict = null | { reason: 'not_pinned' | 'definition_changed' | 'definition_unknown'; message: string };

/**
 * A pinned tool set: the tools (by name) and their definition hashes, from a file holding a
 * `tools/list` result (`{"tools": [...]}`) or the array itself.
 */
export class ToolPin {
  private readonly pinned: Map<string, string>;

  constructor(tools: McpTool[]) {
    this.pinned = new Map(tools.map((t) => [t.name, definitionHash(t)]));
  }

  /** Parses a pin file's JSON; a message naming the problem when it holds no tool. */
  static parse(doc: unknown): ToolPin | string {
    const tools = Array.isArray(doc) ? toolsOf({ tools: doc }) : toolsOf(doc);
    if (tools.length === 0) return 'the pin file holds no tool: give a tools/list result ({"tools": [...]}) or an array of tools';
    return new ToolPin(tools);
  }

  /** Tool names pinned. */
  get size(): number {
    return this.pinned.size;
  }

  /**
   * The verdict for a call of `name`, given the definition hash the server announced for it in
   * its live tools/list (undefined when the server's list does not name it, or could not be read:
   * refused, a pin fails closed).
   */
  judge(name: string, announcedHash: string | undefined): PinVerdict {
    const hash = this.pinned.get(name);
    if (hash === undefined) return { reason: 'not_pinned', message: `tool ${name} is not in the pinned manifest` };
    if (announcedHash === undefined) return { reason: 'definition_unknown', message: `the server's live definition of tool ${name} is not known (its tools/list does not name it, or could not be read): not run under the pin` };
    if (announcedHash !== hash) return { reason: 'definition_changed', message: `tool ${name} was redefined since it was pinned (definition ${announcedHash.slice(0, 12)}…, pinned ${hash.slice(0, 12)}…)` };
    return null;
  }
}
