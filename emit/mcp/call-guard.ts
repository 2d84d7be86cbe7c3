/**
 * The gateway's opt-in enforcement: a call may be refused by the pinned tool set
 * (`--pin-manifest`) or by a budget (`--check-budget`), before the server sees it. A refusal
 * is answered to the client as a JSON-RPC error carrying why.
 */
import { randomUUID } from 'node:crypto';
import type { AuditEmitter } from '../emitter.ts';
import type { PendingCall } from './audit-session.ts';
import type { ToolPin } from './tool-definitions.ts';

/** JSON-RPC error codes of the gateway's refusals (the server-defined range). */
export const REFUSAL_CODES = { budget_denied: -32050, not_pinned: -32051, definition_changed: -32052, definition_unknown: -32053 } as const;

/** Why a call was refused. */
export type RefusalReason = keyof typeof REFUSAL_CODES;

/** A call let through (with the call_id its budget check reserved under), or refused. */
export type Admission = { ok: true; callId: string | undefined } | { ok: false; reason: RefusalReason; message: string; data: Record<string, unknown> };

/** Judges one call before it is forwarded. */
export type CallGuard = ((call: PendingCall, announced: ReadonlyMap<string, string>) => Promise<Admission>) & {
  /** A pin is enforced: the live definitions must be known before a call is judged. */
  readonly pinned: boolean;
};

/** What the guard is built with; undefined when neither pin nor budget is on. */
export interface CallGuardOptions {
  pin?: ToolPin;
  /** The emitter whose checkBudget asks the server (built with the budget option). */
  budget?: Pick<AuditEmitter, 'checkBudget'>;
}

/** Counters of refusals, for the gateway's stats line. */
export interface GuardStats {
  admitted: number;
  refused: Record<RefusalReason, number>;
}

/** The guard of the options, or undefined when there is nothing to enforce. */
export function createCallGuard(o: CallGuardOptions, stats: GuardStats): CallGuard | undefined {
  const { pin, budget } = o;
  if (!pin && !budget) return undefined;
  const guard = async (call: PendingCall, announced: ReadonlyMap<string, string>): Promise<Admission> => {
    const verdict = pin?.judge(call.name, announced.get(call.name));
    let a: Admission;
    if (verdict) a = { ok: false, reason: verdict.reason, message: verdict.message, data: { tool: call.name } };
    else if (!budget) a = { ok: true, callId: undefined };
    else {
      // The call_id goes with the check: the server reserves the projected cost until this call is stored.
      const callId = randomUUID();
      const d = await budget.checkBudget({ toolId: call.toolId, args: call.args, callId, taskId: call.taskId, agentId: call.agentId });
      if (d?.decision === 'deny') {
        const over = d.budgets.filter((b) => b.mode === 'deny').map((b) => b.budget_id);
        const message = d.fallback ? `budget check unavailable (${d.reason ?? 'no answer'}) and unavailable means deny` : `budget ${over.join(', ')} would go over its limit`;
        a = { ok: false, reason: 'budget_denied', message: `${call.toolId} not run: ${message}`, data: { decision_id: d.decision_id ?? null, budgets: d.budgets } };
      } else a = { ok: true, callId };
    }
    if (a.ok) stats.admitted++;
    else stats.refused[a.reason]++;
    return a;
  };
  return Object.assign(guard, { pinned: pin !== undefined });
}

/** The JSON-RPC error answering a refused request. */
export function refusalResponse(id: string | number, a: Extract<Admission, { ok: false }>): Record<string, unknown> {
  return { jsonrpc: '2.0', id, error: { code: REFUSAL_CODES[a.reason], message: a.message, data: { tool_audit: { reason: a.reason, ...a.data } } } };
}

/** Fresh counters. */
export function newGuardStats(): GuardStats {
  return { admitted: 0, refused: { budget_denied: 0, not_pinned: 0, definition_changed: 0, definition_unknown: 0 } };
}
