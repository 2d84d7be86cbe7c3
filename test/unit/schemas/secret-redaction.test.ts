/**
 * Redaction of JSON values: secrets inside strings at any depth (non-ASCII, escapes, arrays),
 * configured paths replaced whole, JSON Pointers of where, and keys left as they are. The oracle
 * is the value the test expects, written out by hand; marks are visible stand-ins.
 */
import { describe, expect, it } from 'vitest';
import { canonicalArgs, type JsonValue } from '../../../schemas/canonical-json.ts';
import { secretMark, secretName } from '../../../schemas/secret-detectors.ts';
import { redactJson } from '../../../schemas/secret-redaction.ts';
import { INSIDE, SHAPES } from '../../helpers/secret-corpus.ts';

const mark = (rule: string, secret: string) => `<${rule}:${secret.length}>`;
const AWS = 'AKIAIOSFODNN7EXAMPLE';

describe('redactJson', () => {
  it('redacts strings at every depth and says where, by which rule; a value under a secret\'s name whole, a card number sent as a number', () => {
    const args = {
      query: 'Zürich 😀 weather',
      headers: { Authorization: `Bearer ${'ya29.a0AfH6SMBx9'.repeat(3)}`, 'x/y~z': `key ${AWS}` },
      urls: ['https://ok.example/a', 'postgresql://u:pw-1234@db/x'],
      n: 4111111111111111,
      nested: { deep: [{ note: `line\n${AWS}\t"quoted"` }] },
    };
    const r = redactJson(args, mark);
    expect(r.value).toEqual({
      query: 'Zürich 😀 weather',
      headers: { Authorization: '<secret_name:55>', 'x/y~z': 'key <aws_access_key:20>' },
      urls: ['https://ok.example/a', 'postgresql://u:<url_password:7>@db/x'],
      n: '<card_number:16>',
      nested: { deep: [{ note: 'line\n<aws_access_key:20>\t"quoted"' }] },
    });
    expect(r.redactions).toEqual([
      { pointer: '/headers/Authorization', rule: 'secret_name' },
      { pointer: '/headers/x~1y~0z', rule: 'aws_access_key' },
      { pointer: '/urls/1', rule: 'url_password' },
      { pointer: '/n', rule: 'card_number' },
      { pointer: '/nested/deep/0/note', rule: 'aws_access_key' },
    ]);
    expect(args.headers['x/y~z']).toBe(`key ${AWS}`); // the input is not changed
  });

  it('replaces configured paths whole, whatever their type, with * for any key or index', () => {
    const args = { user: 'zoë', password: 'hunter2', auth: { token: { v: 1 }, scheme: 'x' }, list: [{ secret: 's1' }, { secret: 's2', keep: true }] };
    const r = redactJson(args, mark, { paths: ['password', 'auth.token', 'list.*.secret'] });
    expect(r.value).toEqual({ user: 'zoë', password: '<path:7>', auth: { token: '<path:7>', scheme: 'x' }, list: [{ secret: '<path:2>' }, { secret: '<path:2>', keep: true }] });
    expect(r.redactions.map((x) => x.pointer)).toEqual(['/password', '/auth/token', '/list/0/secret', '/list/1/secret']);
  });

  it('the same secret gives the same canonical args (repeats stay repeats); a value without secrets is unchanged, __proto__ kept as a key', () => {
    const key = 'k-0123456789';
    const keyed = (rule: string, s: string) => secretMark(key, rule, s);
    const a = redactJson({ q: `use ${AWS}`, n: 1 }, keyed).value as JsonValue;
    const b = redactJson(JSON.parse(`{"n": 1, "q": "use ${AWS}"}`), keyed).value as JsonValue;
    expect(canonicalArgs(a)).toBe(canonicalArgs(b));
    expect(canonicalArgs(a)).not.toContain(AWS);
    const plain = JSON.parse('{"__proto__": {"x": 1}, "s": "nothing"}');
    const r = redactJson(plain, keyed);
    expect(r.redactions).toEqual([]);
    expect(JSON.stringify(r.value)).toBe('{"__proto__":{"x":1},"s":"nothing"}');
    expect(redactJson(`top ${AWS}`, mark)).toEqual({ value: 'top <aws_access_key:20>', redactions: [{ pointer: '', rule: 'aws_access_key' }] });
  });

  it.each(SHAPES)('%s: every planted secret out, each redaction where and by which rule the corpus says', (_what, args, secrets, where) => {
    const r = redactJson(args, mark);
    const text = JSON.stringify(r.value);
    for (const secret of secrets) expect(text).not.toContain(secret);
    // A key that held a secret is its placeholder: named KEY here.
    const got = r.redactions.map((x) => [x.pointer.startsWith('/<') ? '/KEY' : x.pointer, x.rule]);
    expect(got.sort()).toEqual([...where].sort());
  });

  it.each(INSIDE)('JSON text inside a string (%s): read as the JSON it holds, every shape\'s secrets out, found at the string', (_what, wrap, pointer, unwrap) => {
    for (const [what, args, secrets] of SHAPES) {
      const r = redactJson(wrap(args), mark);
      const text = JSON.stringify(r.value);
      for (const secret of secrets) expect(text, what).not.toContain(secret);
      expect(r.redactions.length, what).toBeGreaterThan(0);
      expect(new Set(r.redactions.map((x) => x.pointer)), what).toEqual(new Set([pointer]));
      // Unwrapped, the text holds what the args redacted directly hold (the oracle: the walk of a
      // plain value, tested above).
      const direct = JSON.parse(JSON.stringify(redactJson(args, mark).value)) as unknown;
      expect(unwrap(r.value as Record<string, unknown>), what).toEqual(direct);
    }
  });

  it('writes a JSON text that held a secret back as Python\'s json.dumps does, numbers as written; one without a secret byte for byte', () => {
    const clean = { text: '{"n": 1.50, "big": 12345678901234567890, "city": "Zürich",\n "list": [1e2]}' };
    expect(redactJson(clean, mark)).toEqual({ value: clean, redactions: [] });
    const r = redactJson({ text: '{"password":"hunter2","n":1.50,"e":1e2,"big":12345678901234567890,"city":"Zürich","l":[]}' }, mark);
    expect(r.value).toEqual({ text: '{"password": "<secret_name:7>", "n": 1.5, "e": 100.0, "big": 12345678901234567890, "city": "Z\\u00fcrich", "l": []}' });
    // Strings that only look like JSON, and scalars, are texts.
    expect(redactJson({ a: '[not json] password=hunter2', b: '123', c: '{' }, mark).value).toEqual({ a: '[not json] password=<connection_password:7>', b: '123', c: '{' });
  });

  it('names a secret by its last words, in any case and separator, and not a count, a cursor or a longer word', () => {
    const yes = ['password', 'DB_PASSWORD', 'X-Api-Key', 'apiKey', 'clientSecret', 'Set-Cookie', 'github_token', 'accessToken', 'AWS_SECRET_ACCESS_KEY', 'pass', 'Authorization', 'private.key', 'credentials'];
    const no = ['max_tokens', 'token_count', 'tokens_used', 'bypass', 'compass', 'page_token', 'nextPageToken', 'passage', 'key', 'cache_key', 'password_hint', 'secretary', ''];
    expect(yes.filter((n) => !secretName(n))).toEqual([]);
    expect(no.filter((n) => secretName(n))).toEqual([]);
  });
});

