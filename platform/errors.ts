/**
 * The error type tool-audit throws for bugs, infrastructure faults, and a request the read path
 * cannot answer (a bad parameter deep in a query, an id that names nothing: `BAD_REQUEST`,
 * `NOT_FOUND`, answered by the API's one error handler). Expected failures of ingest (an invalid
 * packet) are returned as values; `retryable` tells the caller whether trying again may help.
 * Other Error classes remain at two edges: the emitter's DeliveryError, BudgetDeniedError and
 * EmitterTimeoutError are its public API (users catch them by class), and the pages' ApiError
 * lives in the browser bundle.
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
  /** A request the client can fix (a malformed cursor, an inverted window): answered 400. */
  | 'BAD_REQUEST'
  /** What a request names does not exist: answered 404. */
  | 'NOT_FOUND'
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

/**
 * A server's answer other than success (a witness, the API to a CLI command): a 5xx may pass, so a
 * retry may help; a 4xx will not. `message` should carry the status.
 */
export function serverRefusal(status: number, message: string): AppError {
  return new AppError(status >= 500 ? 'SERVER_UNAVAILABLE' : 'SERVER_REFUSED', message, { retryable: status >= 500 });
}

/** A request the client can fix; the API answers it 400 with the message. */
export function badRequest(message: string): AppError {
  return new AppError('BAD_REQUEST', message, { retryable: false });
}

/** What a request names does not exist; the API answers it 404 with the message. */
export function notFound(message: string): AppError {
  return new AppError('NOT_FOUND', message, { retryable: false });
}

/** Whether `err` is an AppError of this code. */
export function isAppError(err: unknown, code: ErrorCode): err is AppError {
  return err instanceof AppError && err.code === code;
}

/** True when an error (AppError or not) is worth retrying. Unknown errors are assumed transient. */
export function isRetryable(err: unknown): boolean {
  return err instanceof AppError ? err.retryable : true;
}

/** A short message for logs and API answers, whatever was thrown. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
