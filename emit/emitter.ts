/**
 * The audit emitter orchestrators wrap tool calls with. `invoke` runs the tool, hands its
 * result (or exception) back unchanged, and queues exactly one tool_call packet — plus an
 * output_artifact when a successful call produced content. It never waits for the sink:
 * serialization, hashing and delivery happen in the buffer's background flusher.
 */
import { randomUUID } from 'node:crypto';
import type { MinimalLogger } from '../platform/minimal-logger.ts';
import { Redactor, type RedactionPolicy } from '../schemas/redaction-policy.ts';
import { encodeModelTurn, type ObservedTurn } from './model-turn.ts';
import { encodeAgentRun, type ObservedRun } from './agent-run.ts';
import { parseName, parseOrchestrator, type Orchestrator, type ToolStatus } from '../schemas/vocabulary.ts';
import { PacketBuffer } from './buffer.ts';
import type { BufferOptions, BufferStats } from './buffer-options.ts';
import { createHttpTransport, type HttpTransportOptions } from './http-transport.ts';
import { createKafkaTransport, type KafkaTransportOptions } from './kafka-transport.ts';
import {
  encodeOutputArtifact,
  encodeToolCall,
  objectJson,
  packetKey,
  safeJson,
  wireApproval,
  type CallApproval,
  type InvocationRecord,
  type Outcome,
  type RecordedContent,
  type ToolArgs,
  type WireApproval,
} from './packets.ts';
import { callerValue, failureOutcome, readResult, type AuditedResult } from './result.ts';
import type { PacketTransport } from './transport.ts';
import { BudgetChecker, BudgetDeniedError, type BudgetCheckOptions, type BudgetDecision, type BudgetStats, type CheckCall } from './budget.ts';

/** How to build an emitter. Exactly one of kafka, http and transport. */
export interface AuditEmitterOptions {
  /** Which orchestrator this process is. */
  orchestrator: Orchestrator;
  /** The agent calls are made for, unless invoke says otherwise. */
  agentId: string;
  /** This process, e.g. `kernel-7`; default the orchestrator name. */
  instanceId?: string;
  /** Produce to Kafka (acks from all in-sync replicas). */
  kafka?: KafkaTransportOptions;
  /** POST to a tool-audit server. */
  http?: HttpTransportOptions;
  /** Any other sink (tests: createMemoryTransport()). */
  transport?: PacketTransport;
  /** Batching, bounds and retries. */
  buffer?: BufferOptions;
  /**
   * Check budgets before each call (POST /v1/budget/check of the http transport's server, or
   * budget.url): a deny rejects invoke with {@link BudgetDeniedError} and the tool does not run.
   */
  budget?: BudgetCheckOptions;
  /**
   * Take secrets out before a packet leaves this process: args, result summary, error
   * and output content, each secret replaced by `[redacted:<rule>:<HMAC>]`. `key` must be the
   * server's REDACTION_KEY, so the same secret gives the same placeholder wherever it is redacted;
   * `paths` and `patterns` as the server's REDACTION_PATHS and REDACTION_PATTERNS.
   */
  redaction?: RedactionPolicy;
  /**
   * Where delivery trouble is reported: pino, console or any {error, warn, info, debug} taking
   * (fields, message); default nowhere (stats() always counts it).
   */
  logger?: MinimalLogger;
}

export type { ToolArgs };

/** Per-call settings of {@link AuditEmitter.invoke}. */
export interface InvokeOptions {
  /** The task the call serves; also the Kafka key, so a task's packets stay in order. */
  taskId?: string | null;
  /** Give up waiting after this long: status timeout, and invoke throws {@link EmitterTimeoutError}. */
  timeoutMs?: number;
  /** Overrides the emitter's agentId for this call. */
  agentId?: string;
  /**
   * The human approval this call runs under (a tool whose manifest says requires_approval):
   * sent as invocation.approval. A malformed one rejects invoke with a TypeError before the tool runs.
   */
  approval?: CallApproval;
}

/** What a tool run is handed. */
export interface ToolContext {
  /** The call_id the call is recorded under (for logs, or to link a later call to it). */
  readonly callId: string;
  /** Aborted with an {@link EmitterTimeoutError} when timeoutMs passes. */
  readonly signal: AbortSignal;
}

/** A tool run: returns the tool's value, optionally wrapped by auditResult(), sync or async. */
export type ToolRun<T> = (ctx: ToolContext) => T | AuditedResult<T> | PromiseLike<T | AuditedResult<T>>;

/**
 * A call that ran outside invoke (a gateway or proxy saw it happen): recorded as invoke would
 * have recorded it. Everything is snapshotted when recordCall is called.
 */
export interface ObservedCall {
  toolId: string;
  args: ToolArgs;
  /** The args as `json.dumps(args, sort_keys=True)` with the producer's numbers: sent and hashed as is. */
  argsCanonical?: string;
  /** Default a new UUID; give the one a budget check was made with. */
  callId?: string;
  taskId?: string | null;
  agentId?: string;
  /** From request to response, fractional milliseconds. */
  durationMs: number;
  status: ToolStatus;
  /** Why it failed; ignored (null) on success. */
  error?: string | null;
  resultSummary?: Record<string, unknown>;
  costUsd?: number | null;
  tokensUsed?: Record<string, number> | null;
  /** What the call returned, recorded as an output_artifact on success. */
  content?: RecordedContent;
  /** The human approval the call ran under; a malformed one is logged and the call recorded without it. */
  approval?: CallApproval;
}

/** What a budget check needs to know of a call it is asked about. */
export type BudgetQuestion = Omit<CheckCall, 'agentId' | 'taskId'> & { agentId?: string; taskId?: string | null };

/** Counters of an emitter (see {@link BufferStats}); `budget` with the budget option. */
export type EmitterStats = BufferStats & { budget?: BudgetStats };

/** An audit emitter. */
export interface AuditEmitter {
  /**
   * Runs a tool and records it. Resolves to what the run returned (an error envelope
   * included) and rejects with exactly what it threw; on timeout rejects with
   * {@link EmitterTimeoutError}.
   */
  invoke<T>(toolId: string, args: ToolArgs, run: ToolRun<T>, options?: InvokeOptions): Promise<T>;
  /** Sends everything queued; true when all of it was delivered before the deadline. */
  flush(timeoutMs?: number): Promise<boolean>;
  /** Flushes (bounded by the deadline), then closes the sink. Later invokes still run, unrecorded. */
  close(timeoutMs?: number): Promise<void>;
  /** Records a call that ran elsewhere; returns its call_id. Never throws for a bad value: logs it. */
  recordCall(call: ObservedCall): string;
  /** Records a model turn of the agent (its tokens, cost, the tool calls it asked for); returns its turn_id, or undefined when the turn was not valid (logged). Never throws. */
  recordTurn(turn: ObservedTurn): string | undefined;
  /** Records a run of the agent over a task (what the server names the task after); returns its run_id, or undefined when the run was not valid (logged). Never throws. */
  recordRun(run: ObservedRun): string | undefined;
  /** The budget decision for a call about to run; undefined without the budget option. Never throws. */
  checkBudget(call: BudgetQuestion): Promise<BudgetDecision | undefined>;
  stats(): EmitterStats;
}

/** Thrown by invoke when a call outlives its timeoutMs. */
export class EmitterTimeoutError extends Error {
  constructor(
    readonly toolId: string,
    readonly callId: string,
    readonly timeoutMs: number,
  ) {
    super(`${toolId} timed out after ${timeoutMs} ms`);
    this.name = 'EmitterTimeoutError';
  }
}

interface Call {
  callId: string;
  toolId: string;
  taskId: string | null;
  agentId: string;
  argsJson: string;
  argsCanonical?: string;
  start: number;
  approval?: WireApproval;
}

/** A call to encode when sent, or a packet encoded when recorded (a turn, a run). */
type Queued = { rec: InvocationRecord; output: boolean } | { encoded: string };

// setTimeout fires at once for delays it cannot represent; those mean "no timeout".
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Creates an emitter. Throws on bad options; connects nothing until the first flush. */
export function createAuditEmitter(options: AuditEmitterOptions): AuditEmitter {
  const e = new Emitter(options);
  return {
    invoke: (toolId, args, run, opts) => e.invoke(toolId, args, run, opts),
    flush: (timeoutMs) => e.buffer.flush(timeoutMs),
    close: (timeoutMs) => e.buffer.close(timeoutMs),
    recordCall: (call) => e.recordCall(call),
    recordTurn: (turn) => e.recordTurn(turn),
    recordRun: (run) => e.recordRun(run),
    checkBudget: (call) => (e.budget ? e.budget.check({ ...call, agentId: call.agentId ?? e.defaultAgent, taskId: call.taskId || null }) : Promise.resolve(undefined)),
    stats: () => (e.budget ? { ...e.buffer.stats(), budget: e.budget.stats() } : e.buffer.stats()),
  };
}

class Emitter {
  private readonly orchestrator: Orchestrator;
  readonly defaultAgent: string;
  private readonly instanceId: string;
  private readonly logger: AuditEmitterOptions['logger'];
  readonly buffer: PacketBuffer<Queued>;
  readonly budget: BudgetChecker | undefined;
  private readonly redactor: Redactor | undefined;
  private lastCreatedMs = 0;

  constructor(options: AuditEmitterOptions) {
    this.orchestrator = parseOrchestrator(options.orchestrator);
    this.defaultAgent = parseName(options.agentId, 'agentId');
    this.instanceId = parseName(options.instanceId ?? this.orchestrator, 'instanceId');
    this.logger = options.logger;
    if (options.redaction !== undefined && !(typeof options.redaction.key === 'string' && options.redaction.key.length >= 16)) throw new TypeError('redaction.key must be a string of at least 16 characters (the server\'s REDACTION_KEY)');
    const redactor = options.redaction ? new Redactor(options.redaction) : undefined;
    this.redactor = redactor;
    this.buffer = new PacketBuffer<Queued>(transportOf(options), (q) => encode(q, redactor), options.buffer, options.logger);
    this.budget = options.budget ? new BudgetChecker(options.budget, options.http) : undefined;
  }

  private record(call: Call, outcome: Outcome, durationMs: number): void {
    const now = Date.now();
    // created_at never goes backwards for one instance (I11), even when the wall clock does.
    this.lastCreatedMs = now > this.lastCreatedMs ? now : this.lastCreatedMs;
    const rec: InvocationRecord = {
      callId: call.callId,
      taskId: call.taskId,
      toolId: call.toolId,
      agentId: call.agentId,
      orchestrator: this.orchestrator,
      instanceId: this.instanceId,
      argsJson: call.argsJson,
      ...(call.argsCanonical !== undefined ? { argsCanonical: call.argsCanonical } : {}),
      durationMs,
      createdAtMs: this.lastCreatedMs,
      outcome,
      ...(call.approval ? { approval: call.approval } : {}),
    };
    const key = packetKey(rec);
    this.buffer.push(key, { rec, output: false });
    if (outcome.content) this.buffer.push(key, { rec, output: true });
  }

  recordCall(c: ObservedCall): string {
    const call: Call = { callId: c.callId ?? randomUUID(), toolId: c.toolId, taskId: c.taskId || null, agentId: c.agentId ?? this.defaultAgent, argsJson: '{}', start: 0 };
    try {
      if (c.argsCanonical !== undefined) call.argsCanonical = c.argsCanonical;
      else call.argsJson = objectJson(c.args);
      if (c.approval) call.approval = approvalOrNone(c.approval, this.logger, c.toolId);
      const ok = c.status === 'success';
      const outcome: Outcome = {
        status: c.status,
        error: ok ? null : c.error || c.status,
        resultSummaryJson: objectJson(c.resultSummary ?? {}),
        costUsd: typeof c.costUsd === 'number' && Number.isFinite(c.costUsd) && c.costUsd >= 0 ? c.costUsd : null,
        tokensUsed: c.tokensUsed ?? null,
        // size_bytes must be > 0 (I7): empty content is no artifact.
        content: ok && c.content && c.content.text !== '' ? c.content : undefined,
      };
      this.record(call, outcome, c.durationMs);
    } catch (err) {
      this.logger?.warn({ err: messageOf(err), toolId: c.toolId }, 'audit record failed');
    }
    return call.callId;
  }

  recordTurn(t: ObservedTurn): string | undefined {
    return this.recordEncoded(t.taskId, 'model turn', () => {
      const r = encodeModelTurn(t, { agentId: this.defaultAgent, createdAtMs: Date.now() }, this.redactor);
      return r.ok ? { ok: true, id: r.turnId, packet: r.packet } : r;
    });
  }

  recordRun(run: ObservedRun): string | undefined {
    return this.recordEncoded(run.taskId, 'agent run', () => {
      const r = encodeAgentRun(run, { agentId: this.defaultAgent, createdAtMs: Date.now() }, this.redactor);
      return r.ok ? { ok: true, id: r.runId, packet: r.packet } : r;
    });
  }

  /** Queues a packet encoded now (a turn, a run) in its task's partition, in order with the task's calls; its id, or undefined when it was not valid (logged). */
  private recordEncoded(taskId: string, what: string, encode: () => { ok: true; id: string; packet: string } | { ok: false; error: string }): string | undefined {
    try {
      const r = encode();
      if (!r.ok) {
        this.logger?.warn({ err: r.error }, `${what} not recorded`);
        return undefined;
      }
      this.buffer.push(taskId, { encoded: r.packet });
      return r.id;
    } catch (err) {
      this.logger?.warn({ err: messageOf(err) }, `${what} not recorded`);
      return undefined;
    }
  }

  private returned(call: Call, result: unknown): unknown {
    const durationMs = performance.now() - call.start;
    try {
      this.record(call, readResult(result), durationMs);
    } catch (err) {
      // Only a hostile value (a throwing getter) gets here; the tool call must not suffer for it.
      this.logger?.warn({ err: messageOf(err), toolId: call.toolId }, 'audit record failed');
    }
    return callerValue(result);
  }

  private failed(call: Call, status: ToolStatus, err: unknown): void {
    try {
      this.record(call, failureOutcome(status, messageOf(err)), performance.now() - call.start);
    } catch (e) {
      this.logger?.warn({ err: messageOf(e), toolId: call.toolId }, 'audit record failed');
    }
  }

  invoke<T>(toolId: string, args: ToolArgs, run: ToolRun<T>, opts?: InvokeOptions): Promise<T> {
    const call = this.callOf(toolId, args, opts);
    if (opts?.approval) {
      try {
        call.approval = wireApproval(opts.approval);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    if (!this.budget) return this.start(call, run, opts);
    // The call_id goes with the check: the server reserves the projected cost until this call is stored.
    return this.budget.check({ agentId: call.agentId, toolId, taskId: call.taskId, callId: call.callId, args }).then((d) => {
      if (d.decision === 'deny') throw new BudgetDeniedError(toolId, call.callId, d);
      if (d.decision === 'warn') this.logger?.warn({ toolId, callId: call.callId, budgets: d.budgets.map((b) => b.budget_id), fallback: d.fallback }, 'budget warning');
      return this.start(call, run, opts);
    });
  }

  private callOf(toolId: string, args: ToolArgs, opts: InvokeOptions | undefined): Call {
    return {
      callId: randomUUID(),
      toolId,
      // '' is no task: the schema needs a non-empty task_id or null.
      taskId: opts?.taskId || null,
      agentId: opts?.agentId ?? this.defaultAgent,
      // Snapshot now: the tool (or the caller) may change args before the packet is built.
      argsJson: objectJson(args),
      start: 0,
    };
  }

  /** Runs the tool of a call and records it. */
  private start<T>(call: Call, run: ToolRun<T>, opts: InvokeOptions | undefined): Promise<T> {
    const ctx = new Context(call.callId);
    call.start = performance.now();
    let pending: ReturnType<ToolRun<T>>;
    try {
      pending = run(ctx);
    } catch (err) {
      this.failed(call, 'error', err);
      return Promise.reject(err);
    }
    if (!isThenable(pending)) return Promise.resolve(this.returned(call, pending) as T);
    const timeoutMs = opts?.timeoutMs;
    if (timeoutMs === undefined || !(timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)) {
      return Promise.resolve(pending).then(
        (r) => this.returned(call, r) as T,
        (err: unknown) => {
          this.failed(call, 'error', err);
          throw err;
        },
      );
    }
    return this.withTimeout(call, ctx, pending, timeoutMs);
  }

  /** Settles with the tool, or rejects with an EmitterTimeoutError (and records a timeout) first. */
  private withTimeout<T>(call: Call, ctx: Context, pending: PromiseLike<unknown>, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        settled = true;
        const err = new EmitterTimeoutError(call.toolId, call.callId, timeoutMs);
        this.failed(call, 'timeout', err);
        ctx.abort(err);
        reject(err);
      }, timeoutMs);
      // Whatever the tool does after the timeout is neither recorded nor unhandled.
      Promise.resolve(pending).then(
        (r) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(this.returned(call, r) as T);
        },
        (err: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          this.failed(call, 'error', err);
          reject(err);
        },
      );
    });
  }
}

function transportOf(options: AuditEmitterOptions): PacketTransport {
  const given = [options.kafka, options.http, options.transport].filter((t) => t !== undefined).length;
  if (given !== 1) throw new TypeError('createAuditEmitter needs exactly one of kafka, http or transport');
  if (options.transport) return options.transport;
  if (options.http) return createHttpTransport(options.http);
  const kafka = options.kafka as KafkaTransportOptions;
  return createKafkaTransport({ logger: options.logger, ...kafka });
}

function encode(q: Queued, redactor: Redactor | undefined): string {
  if ('encoded' in q) return q.encoded;
  if (!q.output) return encodeToolCall(q.rec, redactor);
  const packet = encodeOutputArtifact(q.rec, randomUUID(), redactor);
  if (packet === undefined) throw new Error('output_artifact queued for a call without content');
  return packet;
}

/** The wire approval, or none (logged) when malformed: an observed call is recorded whatever it carries. */
function approvalOrNone(a: CallApproval, logger: MinimalLogger | undefined, toolId: string): WireApproval | undefined {
  try {
    return wireApproval(a);
  } catch (err) {
    logger?.warn({ err: messageOf(err), toolId }, 'approval dropped');
    return undefined;
  }
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

/** The error text of whatever was thrown. */
function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err || 'error';
  return safeJson(err) ?? String(err);
}

/** The ToolContext; its AbortController is made only if the tool asks for the signal. */
class Context implements ToolContext {
  private controller: AbortController | undefined;
  private reason: Error | undefined;

  constructor(readonly callId: string) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    this.reason = reason;
    this.controller?.abort(reason);
  }
}
