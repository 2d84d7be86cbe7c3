/**
 * What a tool run may return, and how the emitter reads it into an {@link Outcome}.
 *
 * A run returns its own value and the caller of invoke gets that value back unchanged. The
 * emitter reads it by the envelope conventions of tool-smith's Error Contract:
 *
 * | the run returns | status | output_artifact content | result_summary |
 * |---|---|---|---|
 * | `{status:'error', error_category, message, retryable?, metadata?}` | by category (below) | none | metadata + error_category, retryable |
 * | `{status:'success', result, metadata?}` | success | `result` | metadata |
 * | a string | success | the string (`text`) | `{}` |
 * | `undefined` / `null` / `''` | success | none | `{}` |
 * | any other value | success | JSON.stringify(value) (`json`) | `{}` |
 *
 * Categories: rate_limit → rate_limited, validation_error → invalid_input, timeout → timeout,
 * anything else (auth_error, not_found, server_error, unknown) → error.
 *
 * To say more than the value shows (cost, tokens, a summary, the content to store or a
 * content type), return `auditResult(value, details)`: invoke still resolves to `value`.
 */
import { statusOfCategory, type ContentType, type ErrorCategory, type ToolStatus } from '../schemas/vocabulary.ts';
import { objectJson, safeJson, type Outcome, type RecordedContent } from './packets.ts';

export { statusOfCategory, type ErrorCategory };

/** tool-smith's error envelope; a run that returns one is recorded as failed. */
export interface ToolErrorEnvelope {
  status: 'error';
  // `string & {}` keeps editor completion for the known categories while allowing others.
  error_category: ErrorCategory | (string & {});
  message: string;
  retryable?: boolean;
  metadata?: Record<string, unknown>;
}

/** tool-smith's success envelope; `result` is the content, `metadata` the result_summary. */
export interface ToolSuccessEnvelope<R = unknown> {
  status: 'success';
  result: R;
  metadata?: Record<string, unknown>;
}

/** What the audit record should say beyond what the returned value shows. */
export interface AuditDetails {
  /**
   * The output to record instead of the one derived from the value: a string is stored as
   * is, anything else as JSON.stringify of it (content_type json). `null` records no output.
   */
  content?: string | object | null;
  /** content_type of string content (default `text`); it must match the content (I7). */
  contentType?: ContentType;
  /** result_summary, e.g. `{result_count: 3}`; replaces the envelope's metadata. */
  resultSummary?: Record<string, unknown>;
  /** API cost of the call in USD. */
  costUsd?: number | null;
  /** Token counts, e.g. `{input_tokens: 812, output_tokens: 64}`; non-integer entries are left out. */
  tokensUsed?: Record<string, number> | null;
}

/** A run's value with audit details attached; create it with {@link auditResult}. */
export class AuditedResult<T> {
  constructor(
    readonly value: T,
    readonly details: AuditDetails,
  ) {}
}

/** Returns `value` to the caller of invoke and records `details` with it. */
export function auditResult<T>(value: T, details: AuditDetails): AuditedResult<T> {
  return new AuditedResult(value, details);
}


/** The outcome of a call that did not return normally (it threw, or timed out). */
export function failureOutcome(status: ToolStatus, message: string): Outcome {
  return { status, error: message, resultSummaryJson: '{}', costUsd: null, tokensUsed: null, content: undefined };
}

/** The value the caller of invoke gets: what the run returned, without audit details. */
export function callerValue(returned: unknown): unknown {
  return returned instanceof AuditedResult ? returned.value : returned;
}

/** The outcome to record for what a run returned. */
export function readResult(returned: unknown): Outcome {
  const value = callerValue(returned);
  const details: AuditDetails = returned instanceof AuditedResult ? returned.details : {};
  let outcome: Outcome;
  if (isObject(value) && value.status === 'error') {
    const summary = { ...(isObject(value.metadata) ? value.metadata : {}), error_category: value.error_category ?? null };
    if (typeof value.retryable === 'boolean') Object.assign(summary, { retryable: value.retryable });
    const message = typeof value.message === 'string' && value.message !== '' ? value.message : undefined;
    outcome = failureOutcome(statusOfCategory(value.error_category), message ?? String(value.error_category ?? 'error'));
    outcome.resultSummaryJson = objectJson(details.resultSummary ?? summary);
  } else {
    const envelope = isObject(value) && value.status === 'success' && 'result' in value;
    const data = 'content' in details && details.content !== undefined ? details.content : envelope ? value.result : value;
    const metadata = envelope && isObject(value.metadata) ? value.metadata : undefined;
    const summary = details.resultSummary ?? metadata;
    outcome = {
      status: 'success',
      error: null,
      resultSummaryJson: summary === undefined ? '{}' : objectJson(summary),
      costUsd: null,
      tokensUsed: null,
      content: toContent(data, details.contentType),
    };
  }
  outcome.costUsd = cost(details.costUsd);
  outcome.tokensUsed = tokens(details.tokensUsed);
  return outcome;
}

function toContent(data: unknown, contentType: ContentType | undefined): RecordedContent | undefined {
  if (data === undefined || data === null) return undefined;
  if (typeof data === 'string') {
    // size_bytes must be > 0 (I7): an empty result is no artifact.
    return data === '' ? undefined : { text: data, contentType: contentType ?? 'text', embed: false };
  }
  // The snapshot is taken now: the caller may change the object once invoke returns.
  const text = safeJson(data);
  if (text === undefined) return undefined;
  const first = text.charCodeAt(0);
  return { text, contentType: 'json', embed: first === 0x7b /* { */ || first === 0x5b /* [ */ };
}

function cost(c: unknown): number | null {
  return typeof c === 'number' && Number.isFinite(c) && c >= 0 ? c : null;
}

function tokens(t: unknown): Record<string, number> | null {
  if (!isObject(t)) return null;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(t)) if (Number.isSafeInteger(v) && (v as number) >= 0) out[k] = v as number;
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
