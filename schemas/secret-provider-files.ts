/**
 * The provider table (secret-providers.ts) as the files generated from it: the Python emitter's
 * copy and the docs' list. `npm run gen:secret-providers` writes them; a test checks they are
 * current. Pure: texts by path from the repository's root.
 */
import { PROVIDER_RULES } from './secret-providers.ts';

/** Generated files by path, with their text. */
export function secretProviderFiles(): Record<string, string> {
  return { 'emit-python/tool_audit_emit/_providers.py': pythonText(), 'docs/secret-providers.md': docsText() };
}

function pythonText(): string {
  // JSON string literals are Python string literals with the same value.
  const rows = PROVIDER_RULES.map((r) => `    (${JSON.stringify(r.rule)}, ${JSON.stringify(r.pattern)}, ${r.group ?? 0}),`);
  return [
    '"""Providers\' credential shapes: (rule, pattern, group), in the order the detectors try them.',
    '',
    'Generated from schemas/secret-providers.ts by `npm run gen:secret-providers`: edit that table, not this file.',
    '"""',
    'PROVIDERS = [',
    ...rows,
    ']',
    '',
  ].join('\n');
}

function docsText(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const rows = PROVIDER_RULES.map((r) => `| ${r.provider} | \`${r.rule}\` | \`${cell(r.pattern)}\`${r.group ? ` (group ${r.group})` : ''} | ${cell(r.source)} |`);
  return [
    '# Provider credentials redacted by their shape',
    '',
    'Generated from `schemas/secret-providers.ts` by `npm run gen:secret-providers`: edit that table, not this page.',
    '',
    'Besides these, the detectors of `schemas/secret-detectors.ts` find Anthropic, OpenAI, AWS (access and',
    'secret keys), GitHub, Slack tokens, Google API keys, Stripe, Hugging Face, SendGrid and Azure storage',
    'keys, JWTs, PEM private keys, `Basic` and `Bearer` values, URL and connection-string passwords,',
    'assignments to a secret\'s name, and card numbers ([design](design.md#secrets)). Each shape below',
    'is a fixed prefix and a run of a known alphabet and length, as published by the provider or as',
    'gitleaks\' default configuration has it (its rule id is the source); the whole match, or the',
    'group named, becomes `[redacted:<rule>:<hmac>]`.',
    '',
    '| provider | rule | shape (JavaScript and Python regular expression) | source |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
