/**
 * The logging the emitter and the kafkajs client need, as a structural interface: pino's
 * Logger, console, or any `{error, warn, info, debug}` object taking (fields, message) fits,
 * so the emitter package does not depend on pino.
 */

/** One log method: structured fields first, then the message (pino's argument order). */
export type LogMethod = (fields: object, message?: string) => void;

/** The smallest logger tool-audit writes to. */
export interface MinimalLogger {
  error: LogMethod;
  warn: LogMethod;
  info: LogMethod;
  debug: LogMethod;
}

const discard: LogMethod = () => {};

/** A logger that discards everything. */
export const noopLogger: MinimalLogger = { error: discard, warn: discard, info: discard, debug: discard };
