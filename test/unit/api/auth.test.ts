import { describe, expect, it } from 'vitest';
import { assertSafeExposure } from '../../../api/auth.ts';

describe('auth', () => {
  it('refuses to serve beyond loopback without keys', () => {
    expect(() => assertSafeExposure('0.0.0.0', [])).toThrow(/TOOL_AUDIT_API_KEYS/);
    expect(() => assertSafeExposure('127.0.0.1', [])).not.toThrow();
    expect(() => assertSafeExposure('0.0.0.0', [{ key: 'k'.repeat(16), scopes: ['read'] }])).not.toThrow();
  });
});
