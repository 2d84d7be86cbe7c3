/**
 * The closed vocabularies and limits of SPEC §1 as plain constants, without zod: the zod
 * contracts (tool-invocation.ts, tool-output.ts, common.ts) are built from these, and the
 * emitter package uses them directly so an orchestrator does not install zod to check an
 * enum.
 */

/** Where a call was executed. */
export const ORCHESTRATORS = ['websocket', 'kernel', 'gateway', 'scheduler'] as const;
/** Outcome of a call. */
export const TOOL_STATUSES = ['success', 'timeout', 'error', 'rate_limited', 'invalid_input'] as const;
/** What kind of content an output carries. */
export const CONTENT_TYPES = ['json', 'csv', 'text', 'image_id', 'chart_id', 'code', 'html'] as const;

/** One of the four orchestrators. */
export type Orchestrator = (typeof ORCHESTRATORS)[number];
/** One of the five statuses. */
export type ToolStatus = (typeof TOOL_STATUSES)[number];
/** One of the seven content types. */
export type ContentType = (typeof CONTENT_TYPES)[number];

/** The error categories of tool-smith's Error Contract. */
export type ErrorCategory = 'validation_error' | 'auth_error' | 'not_found' | 'rate_limit' | 'timeout' | 'server_error';

const CATEGORY_STATUS = new Map<unknown, ToolStatus>([
  ['rate_limit', 'rate_limited'],
  ['validation_error', 'invalid_input'],
  ['timeout', 'timeout'],
]);

/**
 * The status an error category is recorded with (rate_limit → rate_limited, validation_error →
 * invalid_input, timeout → timeout, anything else → error): the emitters' envelopes and the OTLP
 * receiver's span mapping both judge by it.
 */
export function statusOfCategory(category: unknown): ToolStatus {
  return CATEGORY_STATUS.get(category) ?? 'error';
}

/** Longest identifier-like name (tool_id, agent_id, instance_id, task_id), in UTF-16 units as zod counts. */
export const MAX_NAME_LENGTH = 256;
/** Characters a turn's messages may hold (a longer text is cut to this by the OTLP mapping and the emitters). */
export const MAX_MESSAGES = 1_048_576;

/** Longest approval reference of a call (a ticket URL, a change id). */
export const MAX_APPROVAL_REFERENCE = 2048;

/** The value as an orchestrator; throws a TypeError naming the field otherwise. */
export function parseOrchestrator(value: unknown, field = 'orchestrator'): Orchestrator {
  if ((ORCHESTRATORS as readonly unknown[]).includes(value)) return value as Orchestrator;
  throw new TypeError(`${field} must be one of ${ORCHESTRATORS.join(', ')}; got ${JSON.stringify(value)}`);
}

/** The value as a name (a string of 1 to 256 characters); throws a TypeError naming the field otherwise. */
export function parseName(value: unknown, field: string): string {
  if (typeof value === 'string' && value.length >= 1 && value.length <= MAX_NAME_LENGTH) return value;
  throw new TypeError(`${field} must be a string of 1 to ${MAX_NAME_LENGTH} characters; got ${JSON.stringify(value)}`);
}
