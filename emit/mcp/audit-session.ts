/**
 * What the gateway knows of one MCP session, fed with copies of the messages passing through
 * (it never changes them): pending `tools/call` requests become tool_call records when their
 * answer, error or cancellation arrives; `tools/list` answers (all pages) are reported; the
 * client's and server's names are read from `initialize`. No I/O: the transports feed it.
 */
import { canonicalArgs, RawNumber, type JsonValue } from '../../schemas/canonical-json.ts';
import { parseLossless } from '../../schemas/lossless-json.ts';
import { withPythonNumbers } from '../../schemas/python-numbers.ts';
import type { AuditEmitter } from '../emitter.ts';
import type { CallApproval } from '../packets.ts';
import { cancelOutcome, errorOutcome, lostOutcome, resultOutcome, type CallOutcome } from './call-outcome.ts';
import { definitionHash, mcpToolId, type McpTool } from '../../schemas/mcp-tools.ts';
import { hasCall, isId, isObject, type Id } from './json-rpc.ts';
import { listAllTools, type ToolsListAsker } from './own-requests.ts';
import { toolsOf } from './tool-definitions.ts';

/** `_meta` key a client sets to name the task of a call (wins over traceparent and the session). */
export const TASK_META_KEY = 'tool-audit/task_id';
/** `_meta` key a client sets to name the agent of a call (wins over --agent-id and clientInfo). */
export const AGENT_META_KEY = 'tool-audit/agent_id';
/**
 * `_meta` key a client sets to record the human approval a call runs under (a tool whose
 * manifest says requires_approval): `{approved_by, approved_at, reference?}` as in the packet.
 */
export const APPROVAL_META_KEY = 'tool-audit/approval';

/** A complete `tools/list` answer: every page, from the first to the one without nextCursor. */
export interface ToolsListSeen {
  server: string;
  serverInfo: Record<string, unknown> | null;
  tools: McpTool[];
  seenAtMs: number;
}

/** What a session is built with. */
export interface AuditSessionOptions {
  /** Records calls (an AuditEmitter). */
  recorder: Pick<AuditEmitter, 'recordCall'>;
  /** The task of calls that name none (the MCP session id, --task-id, or one per stdio process). */
  taskId: string;
  /** --agent-id; default the client's name from initialize, else `mcp-client`. */
  agentId?: string;
  /** --server; default the server's name from initialize, else `mcp-server`. */
  serverName?: string;
  /** Called with each complete tools/list answer. */
  onToolsList?: (seen: ToolsListSeen) => void;
  /** Told when a message could not be audited (it was relayed all the same). */
  onAuditError?: (err: unknown) => void;
  /** Monotonic milliseconds (default performance.now). */
  now?: () => number;
}

/** A tools/call the client made, known to the session until it ends. */
export interface PendingCall {
  callId: string | undefined;
  toolId: string;
  name: string;
  args: Record<string, unknown>;
  /**
   * The args as CPython's json.loads + json.dumps(sort_keys=True) write them (the args_hash
   * input); undefined when they hold what JSON cannot carry (1e400 is Infinity to Python).
   */
  argsCanonical: string | undefined;
  taskId: string;
  agentId: string;
  start: number;
  /** From the request's `_meta` ({@link APPROVAL_META_KEY}); a malformed one is logged and dropped by the emitter. */
  approval?: CallApproval;
  /** The client's span the call was made in, from a `_meta` traceparent: kept in the call's result summary as `otel`. */
  otel?: { trace_id: string; parent_span_id: string };
}

type Message = Record<string, unknown>;

/** One MCP session's audit state. */
/** What sessions of one server share: the names from initialize and the tools announced. */
interface Identity {
  clientName: string | undefined;
  serverInfo: Record<string, unknown> | null;
  /** Definition hash of each tool as the server last announced it. */
  announced: Map<string, string>;
  /** A whole tools/list was seen since the server last said its tools changed (list_changed). */
  listed: boolean;
  /** The gateway's own tools/list under way, shared by the calls that wait for it. */
  listing?: Promise<void> | undefined;
}

export class AuditSession {
  private readonly calls = new Map<Id, PendingCall>();
  private readonly lists = new Map<Id, boolean /* first page */>();
  private listPages: McpTool[] | undefined;
  private initializeId: Id | undefined;
  private readonly now: () => number;
  private task: string;

  constructor(
    private readonly o: AuditSessionOptions,
    private readonly identity: Identity = { clientName: undefined, serverInfo: null, announced: new Map(), listed: false },
  ) {
    this.now = o.now ?? (() => performance.now());
    this.task = o.taskId;
  }

  /** Definition hash of each tool as the server last announced it. */
  get announced(): Map<string, string> {
    return this.identity.announced;
  }

  /** Whether the tools' live definitions are known: a whole tools/list seen since the last list_changed. */
  get listed(): boolean {
    return this.identity.listed;
  }

  /** Takes what was listed as stale: the next {@link ensureListed} lists again. */
  forgetList(): void {
    this.identity.listed = false;
  }

  /**
   * Makes the live definitions known before a call is judged under a pin (fail closed): unless a
   * whole tools/list was seen since the server last said its tools changed, the gateway lists
   * them itself through `ask`, every page, within `timeoutMs`. Calls waiting at once share one
   * listing. A listing that fails leaves the definitions unknown (the pin then refuses the call).
   */
  async ensureListed(ask: ToolsListAsker, timeoutMs: number): Promise<void> {
    if (this.identity.listed) return;
    this.identity.listing ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no tools/list answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        this.announceAll(await Promise.race([listAllTools(ask), deadline]));
      } finally {
        clearTimeout(timer);
        this.identity.listing = undefined;
      }
    })();
    await this.identity.listing;
  }

  /** A whole list of the server's tools (the client's, or the gateway's own): the definitions now in force. */
  private announceAll(tools: McpTool[]): void {
    this.announced.clear();
    for (const t of tools) this.announced.set(t.name, definitionHash(t));
    this.identity.listed = true;
    this.o.onToolsList?.({ server: this.server, serverInfo: this.identity.serverInfo, tools, seenAtMs: Date.now() });
  }

  /**
   * A session of its own for one exchange, sharing this one's task, names and tools: over HTTP a
   * server without sessions answers each request on its own response, and two clients may use
   * the same JSON-RPC ids, so their calls must not meet in one map.
   */
  fork(): AuditSession {
    return new AuditSession({ ...this.o, taskId: this.task }, this.identity);
  }

  /** The task of calls that name none. */
  get taskId(): string {
    return this.task;
  }

  /** Files the session under the id the server gave it (Streamable HTTP: after initialize). */
  retask(taskId: string): void {
    this.task = taskId;
  }

  /** The name calls' tool_ids are prefixed with. */
  get server(): string {
    const name = this.identity.serverInfo?.name;
    return this.o.serverName ?? (typeof name === 'string' && name !== '' ? name : 'mcp-server');
  }

  /** The tool_id of an MCP tool of this session's server: `<server>/<tool>`. */
  toolId(name: string): string {
    return mcpToolId(this.server, name);
  }

  /** Calls awaiting their answer. */
  get pending(): number {
    return this.calls.size;
  }

  /**
   * A message (or batch) the client sent, after it was let through. `raw` is its JSON text: a
   * tools/call's args are re-read from it with their number literals (1.0 stays a float).
   */
  fromClient(msg: unknown, raw?: string): void {
    // What a message does to the audit must never break the relay: a message too deep to
    // canonicalise (RangeError) is not audited, and is said.
    guarded(() => {
      const exact = raw !== undefined && hasCall(msg) ? exactOf(raw) : undefined;
      if (Array.isArray(msg)) msg.forEach((m, i) => this.clientMessage(m, Array.isArray(exact) ? exact[i] : undefined));
      else this.clientMessage(msg, exact);
    }, this.o.onAuditError);
  }

  /** A message (or batch) the server sent. */
  fromServer(msg: unknown): void {
    guarded(() => {
      if (Array.isArray(msg)) for (const m of msg) this.serverMessage(m);
      else this.serverMessage(msg);
    }, this.o.onAuditError);
  }

  /**
   * Ends the calls a request made whose answer will not come as a JSON-RPC response (the HTTP
   * request failed, or the server answered it with an HTTP error).
   */
  endCalls(ids: Id[], why: string): void {
    for (const id of ids) {
      const call = this.calls.get(id);
      if (!call) continue;
      this.calls.delete(id);
      this.finish(call, lostOutcome(why));
    }
  }

  /**
   * The call a tools/call request describes (for a budget check or a pin) without tracking it;
   * `exact` is the request parsed with its number literals, when the text was at hand.
   */
  describe(req: Message, exact?: unknown): PendingCall {
    const params = (isObject(req.params) ? req.params : {}) as { name?: unknown; arguments?: unknown; _meta?: unknown };
    const args = isObject(params.arguments) ? params.arguments : {};
    const exactArgs = isObject(exact) && isObject(exact.params) && isObject(exact.params.arguments) ? exact.params.arguments : args;
    const name = typeof params.name === 'string' ? params.name : '';
    const meta = isObject(params._meta) ? params._meta : {};
    const clientName = this.identity.clientName;
    return {
      callId: undefined,
      toolId: this.toolId(name),
      name,
      args,
      argsCanonical: pythonCanonical(exactArgs as JsonValue),
      taskId: nameIn(meta[TASK_META_KEY]) ?? traceId(meta.traceparent) ?? this.task,
      agentId: nameIn(meta[AGENT_META_KEY]) ?? this.o.agentId ?? clientName ?? 'mcp-client',
      start: this.now(),
      ...approvalIn(meta[APPROVAL_META_KEY]),
      ...otelIn(meta.traceparent),
    };
  }

  /** Tracks an admitted tools/call (already described) under the call_id its budget check used. */
  track(req: Message, call: PendingCall = this.describe(req), callId?: string): void {
    if (!isId(req.id)) return;
    call.callId = callId;
    this.calls.set(req.id, call);
  }

  /** Ends every pending call as lost (the upstream closed, or the gateway is stopping). */
  close(why: string): void {
    for (const [id, call] of this.calls) {
      this.calls.delete(id);
      this.finish(call, lostOutcome(why));
    }
  }

  private clientMessage(m: unknown, exact: unknown): void {
    if (!isObject(m) || typeof m.method !== 'string') return;
    if (m.method === 'tools/call' && isId(m.id)) this.track(m, this.describe(m, exact));
    else if (m.method === 'tools/list' && isId(m.id)) this.lists.set(m.id, !(isObject(m.params) && m.params.cursor !== undefined));
    else if (m.method === 'initialize' && isId(m.id)) {
      this.initializeId = m.id;
      const info = isObject(m.params) && isObject(m.params.clientInfo) ? m.params.clientInfo : {};
      this.identity.clientName = nameIn(info.name);
    } else if (m.method === 'notifications/cancelled' && isObject(m.params) && isId(m.params.requestId)) {
      const call = this.calls.get(m.params.requestId);
      if (!call) return;
      // A server may still answer a cancelled request; the call ended for the client now.
      this.calls.delete(m.params.requestId);
      this.finish(call, cancelOutcome(m.params.reason));
    }
  }

  private serverMessage(m: unknown): void {
    // The server's tools changed: what was listed no longer holds (a pin lists them again).
    if (isObject(m) && m.method === 'notifications/tools/list_changed') this.identity.listed = false;
    // A message with a method is the server's request or notification (sampling, progress): not ours.
    if (!isObject(m) || m.method !== undefined || !isId(m.id)) return;
    const call = this.calls.get(m.id);
    if (call) {
      this.calls.delete(m.id);
      this.finish(call, m.error !== undefined ? errorOutcome(m.error) : resultOutcome(m.result));
      return;
    }
    if (m.id === this.initializeId && isObject(m.result)) {
      this.initializeId = undefined;
      this.identity.serverInfo = isObject(m.result.serverInfo) ? m.result.serverInfo : null;
      return;
    }
    const first = this.lists.get(m.id);
    if (first === undefined) return;
    this.lists.delete(m.id);
    if (isObject(m.result)) this.listPage(first, m.result);
  }

  private listPage(first: boolean, result: Message): void {
    // A page not following a first page (the gateway started mid-listing) cannot make a whole list.
    if (first) this.listPages = [];
    if (!this.listPages) return;
    this.listPages.push(...toolsOf(result));
    if (typeof result.nextCursor === 'string') return;
    const tools = this.listPages;
    this.listPages = undefined;
    this.announceAll(tools);
  }

  private finish(call: PendingCall, outcome: CallOutcome): void {
    this.o.recorder.recordCall({
      callId: call.callId,
      toolId: call.toolId,
      args: call.args,
      argsCanonical: call.argsCanonical,
      taskId: call.taskId,
      agentId: call.agentId,
      durationMs: this.now() - call.start,
      status: outcome.status,
      error: outcome.error,
      // The client's span beside what the server answered, so the call can be found in the client's trace.
      resultSummary: call.otel ? { ...outcome.resultSummary, otel: call.otel } : outcome.resultSummary,
      content: outcome.content,
      ...(call.approval ? { approval: call.approval } : {}),
    });
  }
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const ZEROS = /^0+$/;

/** The ids of a W3C traceparent (`00-<32 hex>-<16 hex>-<2 hex>`); a trace id of zeros is none. */
function traceparentOf(v: unknown): { traceId: string; parentId: string } | undefined {
  const m = typeof v === 'string' ? TRACEPARENT.exec(v.trim()) : null;
  return m && !ZEROS.test(m[1] as string) ? { traceId: m[1] as string, parentId: m[2] as string } : undefined;
}

/** The trace id of a W3C traceparent, the task of a traced call. */
export function traceId(v: unknown): string | undefined {
  return traceparentOf(v)?.traceId;
}

/** `{otel: {trace_id, parent_span_id}}` of a valid traceparent (W3C: neither id all zeros), else nothing. */
function otelIn(v: unknown): { otel?: { trace_id: string; parent_span_id: string } } {
  const t = traceparentOf(v);
  return t && !ZEROS.test(t.parentId) ? { otel: { trace_id: t.traceId, parent_span_id: t.parentId } } : {};
}

/**
 * The message re-read with its number literals, when JSON.parse may have lost one Python keeps
 * (a fraction or exponent: 1.0 is a float there; an integer of 16 digits or more); else
 * undefined, and the parsed message is exact. The lossless parser is slow: most calls skip it.
 */
export function exactOf(raw: string): unknown {
  return /\d[.eE]|\d{16}/.test(raw) ? parseLossless(raw) : undefined;
}

/** canonicalArgs of the args with Python's numbers, or undefined when a number is not finite there. */
function pythonCanonical(args: JsonValue): string | undefined {
  const python = withPythonNumbers(args);
  // Infinity/NaN are not JSON: spliced into a packet they would make it unreadable.
  return hasNonFinite(python) ? undefined : canonicalArgs(python);
}

function hasNonFinite(v: JsonValue): boolean {
  if (v instanceof RawNumber) return !/^-?\d/.test(v.literal);
  if (Array.isArray(v)) return v.some(hasNonFinite);
  if (v !== null && typeof v === 'object') return Object.values(v).some(hasNonFinite);
  return false;
}

function guarded(run: () => void, onError: ((err: unknown) => void) | undefined): void {
  try {
    run();
  } catch (err) {
    onError?.(err);
  }
}


/** `{approval}` of a `_meta` value in the packet's field names, or nothing when there is none. */
function approvalIn(v: unknown): { approval?: CallApproval } {
  if (!isObject(v)) return {};
  const { approved_by: approvedBy, approved_at: approvedAt, reference } = v as Record<string, unknown>;
  // Shapes are judged by the emitter (wireApproval), which logs what it drops.
  return { approval: { approvedBy, approvedAt, ...(reference === undefined ? {} : { reference }) } as CallApproval };
}

function nameIn(v: unknown): string | undefined {
  return typeof v === 'string' && v.length >= 1 && v.length <= 256 ? v : undefined;
}
