/**
 * The secret detectors on realistic fake values in the places they occur (args, headers, URLs,
 * connection strings, files read) and on near-misses that must stay as they are. Fake keys are
 * assembled here so that no scanner mistakes this file for a leak. The oracle is the value the
 * test planted: exactly its span is found, by the rule named.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { findSecrets, luhnValid, redactString, secretMark } from '../../../schemas/secret-detectors.ts';

import { readFileSync } from 'node:fs';
import { secretProviderFiles } from '../../../schemas/secret-provider-files.ts';
import { PROVIDER_RULES } from '../../../schemas/secret-providers.ts';
import { FOUND, JWT, NEAR_MISSES, PROVIDER_FOUND } from '../../helpers/secret-corpus.ts';

describe('secret detectors', () => {
  it.each(FOUND)('%s: finds exactly the planted secret', (rule, text, secret) => {
    const hits = findSecrets(text);
    expect(hits.map((h) => ({ rule: h.rule, secret: text.slice(h.start, h.end) }))).toEqual([{ rule, secret }]);
  });

  it.each(PROVIDER_FOUND)('%s: finds exactly the planted provider credential', (rule, text, secret) => {
    const hits = findSecrets(text);
    expect(hits.map((h) => ({ rule: h.rule, secret: text.slice(h.start, h.end) }))).toEqual([{ rule, secret }]);
    // Half of it is too short for its shape: no credential of that provider.
    expect(findSecrets(text.replace(secret, secret.slice(0, Math.ceil(secret.length / 2)))).map((h) => h.rule)).not.toContain(rule);
  });

  it('knows at least 40 providers besides the generic kinds, each planted in the corpus, each listed in the generated docs and the Python copy', () => {
    const own = ['anthropic_key', 'openai_key', 'aws_access_key', 'github_token', 'slack_token', 'google_api_key', 'stripe_key', 'huggingface_token', 'sendgrid_key', 'azure_storage_key'];
    expect(new Set([...own, ...PROVIDER_RULES.map((r) => r.provider)]).size).toBeGreaterThanOrEqual(40);
    expect(PROVIDER_RULES.map((r) => r.rule).sort()).toEqual([...new Set(PROVIDER_FOUND.map(([rule]) => rule))].sort());
    for (const [path, text] of Object.entries(secretProviderFiles())) {
      expect(readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8'), `${path} is stale: npm run gen:secret-providers`).toBe(text);
    }
  });

  it.each(NEAR_MISSES.map((t) => [t]))('leaves a near-miss alone: %s', (text) => {
    expect(findSecrets(text)).toEqual([]);
  });

  it('finds e-mail addresses only when asked, and custom patterns', () => {
    const text = 'contact zoë.doe+billing@example.co.uk about customer CUST-000123';
    expect(findSecrets(text)).toEqual([]);
    const hits = findSecrets(text, { email: true, custom: [{ rule: 'customer_id', pattern: /\bCUST-\d{6}\b/ }] });
    expect(hits.map((h) => [h.rule, text.slice(h.start, h.end)])).toEqual([
      ['email', 'doe+billing@example.co.uk'],
      ['customer_id', 'CUST-000123'],
    ]);
  });

  it('Luhn: the test numbers of the schemes pass, a changed digit fails', () => {
    for (const n of ['4111111111111111', '5555555555554444', '378282246310005', '6011111111111117', '4012888888881881']) {
      expect(luhnValid(n)).toBe(true);
      expect(luhnValid(n.slice(0, -1) + String((Number(n.slice(-1)) + 1) % 10))).toBe(false);
    }
  });

  it('redacts every secret of a text to a keyed placeholder: the same secret, the same mark; another key, another mark', () => {
    const key = 'redaction-key-0123456789';
    const text = `curl -H "Authorization: Bearer ${JWT}" "postgresql://u:pw-1234@db/x" again ${JWT}`;
    const r = redactString(text, (rule, secret) => secretMark(key, rule, secret));
    const mark = `[redacted:jwt:${createHmac('sha256', key).update(JWT).digest('hex').slice(0, 16)}]`;
    expect(r.text).toBe(`curl -H "Authorization: Bearer ${mark}" "postgresql://u:[redacted:url_password:${createHmac('sha256', key).update('pw-1234').digest('hex').slice(0, 16)}]@db/x" again ${mark}`);
    expect(r.rules).toEqual(['jwt', 'url_password']);
    expect(secretMark('another-key', 'jwt', JWT)).not.toBe(mark);
    expect(redactString('nothing here', () => 'X')).toEqual({ text: 'nothing here', rules: [] });
  });
});
