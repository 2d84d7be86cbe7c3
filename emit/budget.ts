/**
 * Budget checks before a tool runs: the emitter asks a tool-audit server's
 * `POST /v1/budget/check` and waits a bounded time (default 50 ms). A deny means the tool does
 * not run; when the server cannot be reached in time, the configured fallback applies and is
 * counted. No dependency: global fetch only.
 */
import type { BudgetFigures } from '../schemas/budget-figures.ts';
import type { ToolArgs } from './packets.ts';

export type { BudgetFigures } from '../schemas/budget-figures.ts';

/** What a check decided; `fallback` = the server was not reached and onUnavailable decided. */
export interface BudgetDecision {
  decision: 'allow' | 'warn' | 'deny';
  budgets: BudgetFigures[];
  /** The recorded decision's id (absent on a fallback). */
  decision_id?: string;
  /** True when the server was not reached in time and the fallback decided. */
  fallback: boolean;
  /** Why the server was not reached (fallback only). */
  reason?: string;
}

/** The `budget` option of createAuditEmitter. */
export interface BudgetCheckOptions {
  /** The projected cost of a call: a fixed amount, or computed from its args (and tool). */
  projectedCostUsd: number | ((args: ToolArgs, toolId: string) => number);
  /** What to do when tool-audit cannot be reached within timeoutMs. */
  onUnavailable: 'allow' | 'deny';
  /** The bounded wait for an answer; default 50 ms. */
  timeoutMs?: number;
  /** The server; default the http transport's url and apiKey (an `ingest` key). */
  url?: string;
  apiKey?: string;
  /** A fetch implementation; default the global one. */
  fetch?: typeof fetch;
}

/** Counters of budget checks (in emitter.stats().budget). */
export interface BudgetStats {
  checks: number;
  allowed: number;
  warned: number;
  denied: number;
  /** Checks the server did not answer in time (or answered with an error): onUnavailable decided. */
  fallbacks: number;
}

/** Rejects invoke when a budget denies the call: the tool did not run. */
export class BudgetDeniedError extends Error {
  constructor(
    readonly toolId: string,
    readonly callId: string,
    readonly decision: BudgetDecision,
  ) {
    const over = decision.budgets.filter((b) => b.mode === 'deny').map((b) => b.budget_id);
    super(decision.fallback ? `${toolId} not run: budget check unavailable (${decision.reason}) and onUnavailable is deny` : `${toolId} not run: budget ${over.join(', ')} would go over its limit`);
    this.name = 'BudgetDeniedError';
  }
}

/** What a check sends. */
export interface CheckCall {
  agentId: string;
  toolId: string;
  taskId: string | null;
  callId: string;
  args: ToolArgs;
}

/** Asks the server before each call. */
export class BudgetChecker {
  private readonly endpoint: string;
  private readonly headers: Record<string, string>;
  private readonly doFetch: typeof fetch;
  private readonly timeoutMs: number;
  private readonly counts: BudgetStats = { checks: 0, allowed: 0, warned: 0, denied: 0, fallbacks: 0 };

  constructor(
    private readonly o: BudgetCheckOptions,
    server: { url?: string; apiKey?: string } | undefined,
  ) {
    const url = o.url ?? server?.url;
    if (!url) throw new TypeError('budget checking needs a server: give budget.url or an http transport');
    if (o.onUnavailable !== 'allow' && o.onUnavailable !== 'deny') throw new TypeError("budget.onUnavailable must be 'allow' or 'deny'");
    this.endpoint = `${url.replace(/\/+$/, '')}/v1/budget/check`;
    this.headers = { 'content-type': 'application/json' };
    const key = o.apiKey ?? server?.apiKey;
    if (key) this.headers.authorization = `Bearer ${key}`;
    this.doFetch = o.fetch ?? fetch;
    this.timeoutMs = o.timeoutMs ?? 50;
  }

  /** A copy of the counters. */
  stats(): BudgetStats {
    return { ...this.counts };
  }

  /** The decision for a call: the server's, or the fallback's. Never throws. */
  async check(call: CheckCall): Promise<BudgetDecision> {
    this.counts.checks++;
    let d: BudgetDecision;
    try {
      const projected = typeof this.o.projectedCostUsd === 'number' ? this.o.projectedCostUsd : this.o.projectedCostUsd(call.args, call.toolId);
      d = await this.ask(call, projected);
    } catch (err) {
      this.counts.fallbacks++;
      d = { decision: this.o.onUnavailable, budgets: [], fallback: true, reason: (err as Error).message };
    }
    if (d.decision === 'deny') this.counts.denied++;
    else if (d.decision === 'warn') this.counts.warned++;
    else this.counts.allowed++;
    return d;
  }

  private async ask(call: CheckCall, projected: number): Promise<BudgetDecision> {
    if (!(Number.isFinite(projected) && projected >= 0)) throw new Error(`projectedCostUsd gave ${projected}`);
    const body = JSON.stringify({ agent_id: call.agentId, tool_id: call.toolId, task_id: call.taskId, projected_cost_usd: projected, call_id: call.callId });
    const controller = new AbortController();
    // One timer for connecting, sending and reading the answer: the wait is bounded as a whole.
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    try {
      const res = await this.doFetch(this.endpoint, { method: 'POST', headers: this.headers, body, signal: controller.signal });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`POST ${this.endpoint} answered ${res.status}: ${text.slice(0, 200)}`);
      const a = JSON.parse(text) as { decision: BudgetDecision['decision']; budgets: BudgetFigures[]; decision_id: string };
      if (a.decision !== 'allow' && a.decision !== 'warn' && a.decision !== 'deny') throw new Error('the answer has no decision');
      return { decision: a.decision, budgets: a.budgets, decision_id: a.decision_id, fallback: false };
    } catch (err) {
      throw controller.signal.aborted ? (controller.signal.reason as Error) : err;
    } finally {
      clearTimeout(timer);
    }
  }
}
