/**
 * The Python emitter redacts exactly as the TypeScript code (secrets never stored): one corpus — the
 * detectors' planted secrets and near-misses, JavaScript's Unicode white space, non-ASCII, e-mail
 * and a custom pattern, and call args with configured paths — through CPython's tool_audit_emit
 * Redactor and through schemas/redaction-policy.ts. The oracle is each other: every text and every
 * canonical args text must be the same, character for character, and every planted secret gone.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalArgs, type JsonValue } from '../../../schemas/canonical-json.ts';
import { Redactor, type RedactionPolicy } from '../../../schemas/redaction-policy.ts';
import { python, root } from '../../helpers/mcp.ts';
import { FOUND, INSIDE, NEAR_MISSES, PEM, PROVIDER_FOUND, rep, SHAPES } from '../../helpers/secret-corpus.ts';

const POLICY: RedactionPolicy = {
  key: 'cross-language-key-0123456789',
  email: true,
  paths: { '*': ['args.password'], db_query: ['args.dsn', 'args.headers.*', 'result_summary.token'] },
  patterns: [{ rule: 'customer_id', source: 'CUST-[0-9]{8}' }],
};

const TEXTS = [
  ...FOUND.map(([, text]) => text),
  ...NEAR_MISSES,
  `Bearer\u00a0${rep('Zx9Qw8Er7Ty6', 30)} (a no-break space is white space in JavaScript)`,
  `password\u2003=\u3000Sp4ce-Ag3nt and pwd=pässwört-Zürich;`,
  'mail ana.lopez+audit@example.co.uk and customer CUST-00412345, not CUST-12',
  `two keys AKIAIOSFODNN7EXAMPLE, AKIAI44QH8DHBEXAMPLE and one again AKIAIOSFODNN7EXAMPLE 😀`,
  `already [redacted:aws_access_key:0123456789abcdef] stays, 4111111111111111 goes`,
  `file:\n${PEM}\n`,
  // Last: every provider shape of the shared table.
  ...PROVIDER_FOUND.map(([, text]) => text),
];

const CALLS: Array<{ tool: string; args: JsonValue; summary: JsonValue }> = [
  { tool: 'db_query', args: { dsn: { host: 'db', port: 5432 }, headers: { a: 'x', b: ['y', 1] }, password: 'p', q: 'select 1', n: 1.5 }, summary: { token: 12, rows: 3 } },
  { tool: 'search', args: { q: `key AKIAIOSFODNN7EXAMPLE in Zürich`, password: 'pw-123', nested: [{ url: 'https://u:secretpw@h/x' }] }, summary: { note: 'Bearer abcdefghijklmnopqrstu1' } },
  { tool: 'search', args: { q: 'nothing to hide', k: 10 }, summary: {} },
  // The shapes agents send secrets in: names, pairs, numbers, keys, assignments.
  ...SHAPES.map(([, args]) => ({ tool: 'agent', args: args as JsonValue, summary: { echo: args as JsonValue } })),
];

// JSON text inside strings, each shape wrapped as agents send it: written back, where it held a
// secret, in one form by both languages (numbers as written, non-ASCII escaped).
const NESTED_CALLS = INSIDE.flatMap(([, wrap]) => SHAPES.map(([, args]) => ({ tool: 'agent', args: wrap(args) as JsonValue, summary: wrap({ echo: args }) as JsonValue })));
const NESTED_TEXTS = [
  ...INSIDE.flatMap(([, wrap]) => SHAPES.map(([, args]) => JSON.stringify(wrap(args)))),
  ...SHAPES.map(([, args]) => `  ${JSON.stringify(args, null, 1)}`),
  '{"password": "x1y2z3", "apiKey": 1.50, "e": 1E2, "i": -0, "big": 123456789012345678901234, "u": "Zürich 😀\\u00e9", "l": [1e400, 0.000001, 1.5e16], "d": {"a": 1, "a": 2}}',
  '[{"name": "X-Api-Key", "value": 12.0}, ["token", -0.0]]',
  '{"nothing here": [1.50, "Zürich"]}',
  '{not json} password=hunter2',
  '{"a": NaN, "password": "hunter2"}',
];

const SCRIPT = `
import json, sys
sys.path.insert(0, sys.argv[1])
from tool_audit_emit._redact import Redactor
from tool_audit_emit._packets import canonical_args
job = json.loads(sys.stdin.read())
r = Redactor(job["policy"])
texts = [r.text(t) for t in job["texts"]]
nested = [r.text(t) for t in job["nested"]]
calls = []
for c in job["calls"]:
    args, summary, changed = r.call(c["tool"], c["args"], c["summary"])
    calls.append([canonical_args(args), json.dumps(summary, sort_keys=True), changed])
print(json.dumps({"texts": texts, "nested": nested, "calls": calls}))
`;

describe('Python emitter redaction', () => {
  it('redacts the corpus exactly as the TypeScript code does', () => {
    const policy = { key: POLICY.key, email: POLICY.email, paths: POLICY.paths, patterns: (POLICY.patterns ?? []).map((p) => ({ rule: p.rule, pattern: p.source })) };
    const out = execFileSync(python(), ['-c', SCRIPT, join(root, 'emit-python')], { input: JSON.stringify({ policy, texts: TEXTS, nested: NESTED_TEXTS, calls: [...CALLS, ...NESTED_CALLS] }), encoding: 'utf8' });
    const py = JSON.parse(out) as { texts: string[]; nested: string[]; calls: Array<[string, string, boolean]> };
    const ts = new Redactor(POLICY);
    expect(py.texts).toEqual(TEXTS.map((t) => ts.text(t)));
    expect(py.nested).toEqual(NESTED_TEXTS.map((t) => ts.text(t)));
    const sortedJson = (v: unknown) => canonicalArgs({ v: v as JsonValue });
    expect(py.calls.map(([args, summary, changed]) => [args, sortedJson(JSON.parse(summary)), changed])).toEqual(
      [...CALLS, ...NESTED_CALLS].map((c) => {
        const r = ts.call(c.tool, { args: c.args, result_summary: c.summary });
        return [canonicalArgs(r.args as JsonValue), sortedJson(r.result_summary), r.changed];
      }),
    );
    // And the corpus is not a blank: every planted secret is gone, every near-miss stays.
    FOUND.forEach(([, , secret], i) => expect(py.texts[i]).not.toContain(secret));
    PROVIDER_FOUND.forEach(([rule, , secret], i) => {
      const out = py.texts[TEXTS.length - PROVIDER_FOUND.length + i] ?? '';
      expect(out, rule).not.toContain(secret);
      expect(out, rule).toContain(`[redacted:${rule}:`);
    });
    // (e-mail addresses are on in this policy: a near-miss with one loses it.)
    NEAR_MISSES.forEach((text, i) => expect(py.texts[FOUND.length + i]).toBe(text.includes('@') ? ts.text(text) : text));
    expect(py.texts[FOUND.length + NEAR_MISSES.length + 2]).toContain('[redacted:customer_id:');
    expect(py.calls.map((c) => c[2])).toEqual([true, true, false, ...SHAPES.map(() => true), ...NESTED_CALLS.map(() => true)]);
    NESTED_CALLS.forEach((_, i) => {
      const [args, summary] = py.calls[CALLS.length + i] as [string, string, boolean];
      for (const secret of (SHAPES[i % SHAPES.length] as (typeof SHAPES)[number])[2]) expect(`${args}${summary}`).not.toContain(secret);
    });
    SHAPES.forEach(([, , secrets], i) => {
      for (const text of [py.nested[i], py.nested[INSIDE.length * SHAPES.length + i]]) for (const secret of secrets) expect(text).not.toContain(secret);
    });
    // Where a text held a secret it is written as json.dumps writes it; else as it was.
    const tail = py.nested.slice(-5);
    expect(tail[0]).toMatch(/^\{"password": "\[redacted:secret_name:[0-9a-f]{16}\]", "apiKey": "\[redacted:secret_name:[0-9a-f]{16}\]", "e": 100\.0, "i": 0, "big": 123456789012345678901234, "u": "Z\\u00fcrich \\ud83d\\ude00\\u00e9", "l": \[Infinity, 1e-06, 1.5e\+16\], "d": \{"a": 2\}\}$/);
    expect(tail[1]).toMatch(/^\[\{"name": "X-Api-Key", "value": "\[redacted:secret_name:[0-9a-f]{16}\]"\}, \["token", "\[redacted:secret_name:[0-9a-f]{16}\]"\]\]$/);
    expect(tail[2]).toBe(NESTED_TEXTS.at(-3));
    expect(tail[3]).toMatch(/^\{not json\} password=\[redacted:connection_password:[0-9a-f]{16}\]$/);
    expect(tail[4]).not.toContain('hunter2');
    SHAPES.forEach(([, , secrets], i) => {
      const [args, summary] = py.calls[3 + i] as [string, string, boolean];
      for (const secret of secrets) expect(`${args}${summary}`).not.toContain(secret);
    });
  });
});
