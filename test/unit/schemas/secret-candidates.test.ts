/**
 * The one pass before the detectors (schemas/secret-candidates.ts): every text of the corpus and
 * the fixture that holds a secret is a candidate, as a string and as the JSON text that carries
 * it (escapes and all); what ordinary calls carry is not; and the ingest path, which skips texts
 * without a candidate, redacts as the walk of every string does.
 */
import { describe, expect, it } from 'vitest';
import { canonicalArgs, type JsonValue } from '../../../schemas/canonical-json.ts';
import { Redactor } from '../../../schemas/redaction-policy.ts';
import { mayHoldSecret, readsAsWritten } from '../../../schemas/secret-detectors.ts';
import { FOUND, PROVIDER_FOUND, SHAPES } from '../../helpers/secret-corpus.ts';
import { SECRET_FIXTURE } from '../../helpers/secret-fixture.ts';

const redactor = new Redactor({ key: 'candidates-test-key-0123456789' });

describe('secret candidates', () => {
  it.each([...FOUND, ...PROVIDER_FOUND])('%s: the text, and the JSON texts holding it, are candidates', (_rule, text) => {
    expect(mayHoldSecret(text)).toBe(true);
    // Where the secret starts a line, after an escape, or after a character past ASCII.
    for (const t of [JSON.stringify({ q: text }), canonicalArgs({ q: `é${text}` }), canonicalArgs({ q: `line\n${text}` })]) {
      expect(readsAsWritten(t) && !mayHoldSecret(t), t).toBe(false);
    }
  });

  it.each(SECRET_FIXTURE.map((p) => [p.shape, p] as const))('%s: the stored args of the fixture are a candidate', (_shape, p) => {
    expect(mayHoldSecret(canonicalArgs(p.args as JsonValue))).toBe(true);
    expect(mayHoldSecret(JSON.stringify(p.args))).toBe(true);
  });

  it('passes over what ordinary calls carry: token counts, task ids, URLs, errors, markup', () => {
    for (const t of [
      '{"max_tokens": 1024, "model": "gpt-4.1", "prompt": "Summarise the findings"}',
      '{"finish_reason": "stop", "output_tokens": 311}',
      'import pandas as pd\ndf = pd.read_json("task-7-000abc.json")',
      '{"url": "https://www.reuters.com/articles/12345?lang=en", "headers": {"accept-language": "en;q=0.8"}}',
      "KeyError: 'revenue'",
      '<!doctype html><html><body><h1>株価 推移 2026年</h1><p>figures 5553 and 48% growth.</p></body></html>',
      'region,revenue,growth_pct\nR0,98851,8.87',
    ]) {
      expect(mayHoldSecret(t), t).toBe(false);
    }
  });

  it('finds the words of a secret and the shapes in any case where their detectors could match', () => {
    for (const t of ['DB_PASSWORD', 'x-api-KEY:', 'the Token was', '"Cookie"', 'Authorization: Basic\tx', 'BEARER\\nabc', 'postgres://u:p@h', '4111 1111 1111 1111', '\\nsk-abc', '(sk-abc', 'SECRET\u212AEY']) {
      expect(mayHoldSecret(t), t).toBe(true);
    }
  });

  it('tells apart JSON texts whose escapes may hide a candidate', () => {
    for (const t of ['{"a": "sk\\u002dant"}', '{"u": "postgres:\\/\\/u:p@h"}', '{"k": "SECRET\\u212aEY"}']) expect(readsAsWritten(t), t).toBe(false);
    for (const t of ['{"a": "line\\nnext"}', '{"a": "say \\"hi\\""}', '{"a": "donn\\u00e9es \\ud83d\\udcc9"}', '{"a": 1}']) expect(readsAsWritten(t), t).toBe(true);
    // Such a text is redacted all the same.
    const hidden = `{"q": "sk\\u002dant-api03-${'a1B2c3D4e5'.repeat(10)}"}`;
    expect(redactor.jsonText(hidden).text).toContain('[redacted:anthropic_key:');
  });

  it.each(SECRET_FIXTURE.map((p) => [p.shape, p] as const))('%s: the ingest path (the texts given) redacts as the walk does', (_shape, p) => {
    const fields = { args: p.args, result_summary: { note: p.secrets[0] ?? null } };
    const texts = { args: canonicalArgs(p.args as JsonValue), summary: JSON.stringify(fields.result_summary) };
    expect(redactor.call('fixture', fields, texts)).toEqual(redactor.call('fixture', fields));
  });

  it.each(SHAPES.map((s) => [s[0], s[1]] as const))('%s: the ingest path redacts as the walk does', (_shape, args) => {
    const fields = { args, result_summary: null };
    expect(redactor.call('t', fields, { args: canonicalArgs(args as JsonValue), summary: 'null' })).toEqual(redactor.call('t', fields));
  });
});
