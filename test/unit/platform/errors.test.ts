/**
 * A server's refusal tells a caller whether trying again may help: a 5xx may pass, a 4xx (the
 * request itself) will not; the message is kept as given.
 */
import { describe, expect, it } from 'vitest';
import { AppError, serverRefusal } from '../../../platform/errors.ts';

describe('serverRefusal', () => {
  it.each([
    [400, 'SERVER_REFUSED', false],
    [401, 'SERVER_REFUSED', false],
    [409, 'SERVER_REFUSED', false],
    [499, 'SERVER_REFUSED', false],
    [500, 'SERVER_UNAVAILABLE', true],
    [503, 'SERVER_UNAVAILABLE', true],
  ] as const)('%i is %s, retryable %s', (status, code, retryable) => {
    const err = serverRefusal(status, `${status} no`);
    expect(err).toBeInstanceOf(AppError);
    expect([err.code, err.retryable, err.message]).toEqual([code, retryable, `${status} no`]);
  });
});
