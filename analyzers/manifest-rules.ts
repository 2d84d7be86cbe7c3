/**
 * The manifest rules M1–M8 as pure functions over calls (outputs for M8) and the manifest's
 * versions (each judged by the version in force at its created_at). The runners (manifest-audit.ts,
 * output-audit.ts) load what each rule needs and record what these return, once, in `violations`.
 */
import { compileValidator, type ArgsValidator } from '../schemas/json-schema-check.ts';
import { isTrifecta, type ManifestEntry } from '../schemas/tool-manifest.ts';
import { violation, type Violation } from './audit-rules.ts';
import type { ManifestHistory } from './manifest-versions.ts';

/** A call as the manifest rules see it. */
export interface AuditCall {
  call_id: string;
  /** '' when the call has no task. */
  task_id: string;
  tool_id: string;
  /** created_at, epoch ms. */
  t: number;
  status: string;
  duration_ms: number;
  cost_usd: number | null;
  /**
   * The call's args_key (cityHash64 of tool_id and args_hash, migration 002), as decimal text: what
   * M5 groups retries by. Read instead of the 64-character args_hash, which the jobs' projection
   * (by_ingest_jobs) no longer stores (migration 021).
   */
  args_key: string;
  /** Canonical args JSON; '' when not loaded (the tool has no input schema in any version). */
  args: string;
  /** The approval's JSON text; '' when none, or not loaded (the tool needs none in any version). */
  approval: string;
}

/** M4's window: calls in (t − 60 s, t]. */
export const RATE_WINDOW_MS = 60_000;

const mv = (invariant: Violation['invariant'], kind: string, ids: string[], detail: string, key?: string): Violation => ({
  violation_key: key ?? `${invariant}/${kind}/${ids.join(',')}`,
  invariant,
  packet_type: 'tool_call',
  ids,
  detail,
});

/** Call order: created_at, then call_id (as text). */
export function callOrder(a: AuditCall, b: AuditCall): number {
  return a.t - b.t || (a.call_id < b.call_id ? -1 : a.call_id > b.call_id ? 1 : 0);
}

/** An output as M8 sees it. */
export interface AuditOutput {
  output_id: string;
  call_id: string;
  tool_id: string;
  /** The output's created_at, epoch ms. */
  t: number;
  content_type: string;
  /** The stored content (its text; JSON text for content_type json). */
  content: string;
}

/** Schema validators, compiled once per (manifest version, tool, input or output). */
export class ValidatorCache {
  private readonly compiled = new Map<string, ArgsValidator | null>();

  /** The validator of `entry`'s `field` in `version`, or null when the tool declares none. */
  of(version: number, entry: ManifestEntry, field: 'input_schema' | 'output_schema' = 'input_schema'): ArgsValidator | null {
    const key = `${version}/${field}/${entry.tool_id}`;
    let v = this.compiled.get(key);
    if (v === undefined) {
      // Schemas were compiled when the manifest was applied; one that fails now judges nothing.
      const schema = entry[field];
      v = schema === null ? null : safeCompile(schema);
      this.compiled.set(key, v);
    }
    return v;
  }
}

function safeCompile(schema: object | boolean): ArgsValidator | null {
  try {
    return compileValidator(schema);
  } catch {
    return null;
  }
}

/** M1, M2, M3 and M7: the rules judged on one call alone. */
export function callRules(calls: readonly AuditCall[], history: ManifestHistory, validators: ValidatorCache): Violation[] {
  const out: Violation[] = [];
  if (!history.loaded) return out;
  for (const c of calls) {
    const version = history.at(c.t);
    if (!version) continue;
    const e = version.manifest[c.tool_id];
    const ids = [c.call_id];
    if (!e) {
      out.push(mv('M1', 'unknown_tool', ids, `tool ${c.tool_id} is declared by no manifest in force at the call (version ${version.version})`));
      continue;
    }
    const validate = validators.of(version.version, e);
    if (validate && c.args !== '') {
      const errors = validate(parseArgs(c.args));
      if (errors) out.push(mv('M2', 'args_schema', ids, `args of ${c.tool_id} fail its input schema (version ${version.version}): ${errors.join('; ')}`));
    }
    if (e.timeout_ms !== null && c.duration_ms > e.timeout_ms && c.status !== 'timeout') {
      out.push(mv('M3', 'timeout_exceeded', ids, `${c.tool_id} ran ${c.duration_ms} ms, over its timeout_ms ${e.timeout_ms}, with status ${c.status}`));
    }
    if (e.billable && c.cost_usd === null) out.push(mv('M7', 'cost_missing', ids, `${c.tool_id} is billable but the call has no cost_usd`));
  }
  return out;
}

/**
 * M8: outputs whose content fails the output_schema of their tool in the version in force at the
 * output's created_at. A json output is judged as the value it holds; any other content type as
 * the JSON string of its text (a schema `{"type": "string"}` accepts a text output).
 */
export function outputRule(outputs: readonly AuditOutput[], history: ManifestHistory, validators: ValidatorCache): Violation[] {
  const out: Violation[] = [];
  for (const o of outputs) {
    const version = history.at(o.t);
    const e = version?.manifest[o.tool_id];
    if (!version || !e) continue;
    const validate = validators.of(version.version, e, 'output_schema');
    if (!validate) continue;
    const errors = validate(o.content_type === 'json' ? parseArgs(o.content) : o.content);
    if (errors) {
      const detail = `output ${o.output_id} (${o.content_type}) of ${o.tool_id} fails its output schema (version ${version.version}): ${errors.join('; ')}`;
      out.push(violation('M8', 'output_schema', 'output_artifact', [o.output_id, o.call_id], detail));
    }
  }
  return out;
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Whether a tool's entry demands a human approval of each call: `requires_approval`, or all three
 * capability tags (tool-smith: the lethal trifecta requires approval regardless of other settings).
 */
export function needsApproval(e: ManifestEntry): boolean {
  return e.requires_approval || isTrifecta(e);
}

/**
 * M9: calls of a tool needing approval in the version in force at the call that have none
 * (`approval_missing`), or whose approval is dated after the call's created_at (`approval_late`).
 */
export function approvalRule(calls: readonly AuditCall[], history: ManifestHistory): Violation[] {
  const out: Violation[] = [];
  for (const c of calls) {
    const version = history.at(c.t);
    const e = version?.manifest[c.tool_id];
    if (!version || !e || !needsApproval(e)) continue;
    const why = e.requires_approval ? 'requires_approval' : 'carries all three capability tags (the lethal trifecta)';
    const text = c.approval;
    if (text === '') {
      out.push(mv('M9', 'approval_missing', [c.call_id], `${c.tool_id} ${why} (version ${version.version}) and the call has no approval`));
      continue;
    }
    const a = JSON.parse(text) as { approved_by: string; approved_at: string };
    if (Date.parse(a.approved_at) > c.t) {
      out.push(mv('M9', 'approval_late', [c.call_id], `${c.tool_id}: approved by ${a.approved_by} at ${a.approved_at}, after the call (created_at ${new Date(c.t).toISOString()})`));
    }
  }
  return out;
}

/**
 * M4: each judged call c whose tool's calls with created_at in (c − 60 s, c] (c and its own
 * millisecond included) number more than the rate_limit_rpm in force at c. `context` must hold
 * every call of the tool in that window of each judged call.
 */
export function rateLimitRule(judged: readonly AuditCall[], context: readonly AuditCall[], history: ManifestHistory): Violation[] {
  const times = new Map<string, number[]>();
  for (const c of context) {
    const list = times.get(c.tool_id);
    if (list) list.push(c.t);
    else times.set(c.tool_id, [c.t]);
  }
  for (const list of times.values()) list.sort((a, b) => a - b);
  const out: Violation[] = [];
  for (const c of judged) {
    const limit = history.entryAt(c.tool_id, c.t)?.rate_limit_rpm;
    if (limit === null || limit === undefined) continue;
    const list = times.get(c.tool_id) ?? [];
    const n = upperBound(list, c.t) - upperBound(list, c.t - RATE_WINDOW_MS);
    if (n > limit) out.push(mv('M4', 'rate_limit', [c.call_id], `${c.tool_id}: ${n} calls in the minute up to this one, over its rate_limit_rpm ${limit}`));
  }
  return out;
}

/** Index of the first element > x in an ascending list. */
function upperBound(list: readonly number[], x: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((list[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Whether a retry after a failure with `failed` status breaks the tool's policy, following
 * tool-smith's error contract (its status is the category the emitters map: rate_limit →
 * rate_limited, validation_error → invalid_input, timeout → timeout, any other → error):
 * - rate_limited: retryable ("retry with backoff"): the tool refused to run, so even a tool that
 *   is not idempotent may be called again;
 * - invalid_input: not retryable: the same args are refused again, whatever the tool;
 * - timeout: retryable only when idempotent ("retry if idempotent");
 * - error: only when idempotent — a server error is retryable there, but auth and not-found
 *   errors are not and the status does not tell them apart, and a failed write may have had effects.
 * Every retry counts against max_retries. Null when the retry is allowed.
 */
export function retryBreach(failed: string, entry: Pick<ManifestEntry, 'idempotent' | 'max_retries'>, toolId: string, retry: number): string | null {
  if (failed === 'invalid_input') return 'the same args were refused as invalid input';
  if (failed !== 'rate_limited' && !entry.idempotent) return `${toolId} is not idempotent`;
  if (entry.max_retries !== null && retry > entry.max_retries) return `over max_retries ${entry.max_retries}`;
  return null;
}

/**
 * M5 for one task's calls: retry runs of one (tool_id, args_hash) — grouped by its 64-bit args_key — in call order, a call extending
 * the run when the run's previous call failed (status ≠ success) 0 < Δ < window earlier (calls in
 * the same millisecond are parallel, SPEC §4, not retries). The k-th call of a run is retry k−1,
 * judged by {@link retryBreach} on the status of the call it retries.
 */
export function retryRule(taskCalls: readonly AuditCall[], history: ManifestHistory, windowMs: number): Violation[] {
  const byKey = new Map<string, AuditCall[]>();
  for (const c of [...taskCalls].sort(callOrder)) {
    const k = `${c.tool_id}\u0000${c.args_key}`;
    const list = byKey.get(k);
    if (list) list.push(c);
    else byKey.set(k, [c]);
  }
  const out: Violation[] = [];
  for (const calls of byKey.values()) {
    let first = calls[0] as AuditCall;
    let retry = 0;
    for (let i = 1; i < calls.length; i++) {
      const prev = calls[i - 1] as AuditCall;
      const c = calls[i] as AuditCall;
      const dt = c.t - prev.t;
      if (prev.status !== 'success' && dt > 0 && dt < windowMs) retry++;
      else {
        first = c;
        retry = 0;
        continue;
      }
      const e = history.entryAt(c.tool_id, c.t);
      if (!e) continue;
      const why = retryBreach(prev.status, e, c.tool_id, retry);
      if (why) out.push(mv('M5', 'retry_policy', [c.call_id], `retry ${retry} of call ${first.call_id} (same args, ${dt} ms after a call that ended ${prev.status}): ${why}`));
    }
  }
  return out;
}

/**
 * M6 for one task: calls a, b, c with a ≤ b ≤ c in created_at, a's tool receiving untrusted
 * input, b's accessing private data, c's communicating externally (tags of the version in force
 * at each call; one call may fill several roles). The earliest such a, then b, then c; one
 * violation per task, keyed by the task so a later triple never records it twice.
 */
export function trifectaRule(taskId: string, taskCalls: readonly AuditCall[], history: ManifestHistory): Violation[] {
  if (taskId === '') return [];
  const ordered = [...taskCalls].sort(callOrder);
  const tagged = (c: AuditCall, tag: 'receives_untrusted_input' | 'accesses_private_data' | 'communicates_externally') => history.entryAt(c.tool_id, c.t)?.[tag] === true;
  const a = ordered.find((c) => tagged(c, 'receives_untrusted_input'));
  const b = a && ordered.find((c) => c.t >= a.t && tagged(c, 'accesses_private_data'));
  const c = b && ordered.find((x) => x.t >= b.t && tagged(x, 'communicates_externally'));
  if (!a || !b || !c) return [];
  const oneTool = history.entryAt(a.tool_id, a.t);
  const note = a === b && b === c && oneTool && isTrifecta(oneTool) ? ' (one tool carries all three tags)' : '';
  return [
    mv(
      'M6',
      'lethal_trifecta',
      [a.call_id, b.call_id, c.call_id],
      `task ${taskId}: untrusted input (${a.tool_id} ${a.call_id}) → private data (${b.tool_id} ${b.call_id}) → external communication (${c.tool_id} ${c.call_id})${note}`,
      `M6/lethal_trifecta/task:${taskId}`,
    ),
  ];
}
