/**
 * The error type tool-audit throws for bugs and infrastructure faults. Expected failures (an
 * invalid packet, a bad request parameter) are returned as values; `retryable` tells the caller
 * whether trying again may help. Other Error classes still exist at the edges (the API's
 * BadRequest and NotFound, queries' InvalidParamError, the emitter's DeliveryError,
 * BudgetDeniedError and EmitterTimeoutError, the pages' ApiError); folding them into codes of
 * this one is still to do.
 */
export type ErrorCode =
  | 'CONFIG_INVALID'
  | 'CLICKHOUSE_UNAVAILABLE'
  | 'CLICKHOUSE_QUERY_FAILED'
  | 'CLICKHOUSE_LIMIT_EXCEEDED'
  | 'SERVER_UNAVAILABLE'
  | 'SERVER_REFUSED'
  | 'KAFKA_UNAVAILABLE'
  | 'KAFKA_PRODUCE_FAILED'
  | 'MIGRATION_FAILED'
  | 'MANIFEST_CONFLICT'
  | 'SHUTTING_DOWN'
  | 'STARTING'
  /** A stored record that no longer matches what the audit log holds of it (answered 409, never served as genuine). */
  | 'INTEGRITY'
  | 'INTERNAL';

/** An infrastructure fault or a bug, with a stable code and a retry hint. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.retryable = options.retryable;
  }
}

/** True when an error (AppError or not) is worth retrying. Unknown errors are assumed transient. */
export function isRetryable(err: unknown): boolean {
  return err instanceof AppError ? err.retryable : true;
}

/** A short message for logs and API answers, whatever was thrown. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
