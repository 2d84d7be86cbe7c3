/**
 * Structured JSON logging (pino, the logger fastify already uses) to stderr, so stdout stays
 * free for command output.
 */
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Creates the process logger. */
export function createLogger(level: string, name = 'tool-audit'): Logger {
  return pino({ name, level }, pino.destination(2));
}

/** A logger that discards everything (tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
