/**
 * The secrets fixture against the redaction every path applies (schemas/redaction-policy.ts): it
 * holds at least 150 secrets in at least 40 shapes, and redacting each item's args leaves none of
 * its secrets in the canonical args text that would be stored — the oracle is the planted values.
 */
import { describe, expect, it } from 'vitest';
import { canonicalArgs, type JsonValue } from '../../../schemas/canonical-json.ts';
import { Redactor } from '../../../schemas/redaction-policy.ts';
import { FIXTURE_SECRETS, SECRET_FIXTURE } from '../../helpers/secret-fixture.ts';

const redactor = new Redactor({ key: 'fixture-test-key-0123456789abcdef' });

describe('the secrets fixture', () => {
  it('holds at least 150 secrets in at least 40 shapes', () => {
    expect(new Set(SECRET_FIXTURE.flatMap((p) => p.secrets)).size).toBeGreaterThanOrEqual(150);
    expect(new Set(SECRET_FIXTURE.map((p) => p.shape)).size).toBeGreaterThanOrEqual(40);
    expect(FIXTURE_SECRETS.length).toBeGreaterThanOrEqual(150);
  });

  it.each(SECRET_FIXTURE.map((p) => [p.shape, p] as const))('%s: no secret is left in the stored args', (_shape, p) => {
    const sent = canonicalArgs(p.args as JsonValue);
    for (const s of p.secrets) expect(sent).toContain(JSON.stringify(s).slice(1, -1).slice(0, 40));
    const r = redactor.call('fixture', { args: p.args, result_summary: null });
    const stored = canonicalArgs(r.args as JsonValue);
    for (const s of p.secrets) expect(stored, s).not.toContain(JSON.stringify(s).slice(1, -1));
  });
});
