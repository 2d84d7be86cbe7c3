/**
 * A turn's messages as the instrumentations carry them — JSON text whose values are JSON text
 * again (a secret inside escaped twice) — with no secret of the shared corpus left, and messages
 * without one stored byte for byte. Oracle: the corpus's secrets, and the text sent.
 */
import { describe, expect, it } from 'vitest';
import { Redactor } from '../../../schemas/redaction-policy.ts';
import { FOUND, SHAPES } from '../../helpers/secret-corpus.ts';

const redactor = new Redactor({ key: 'turn-messages-test-key-0123456789' });

describe('a turn\'s messages through Redactor.text', () => {
  it('finds every secret of the corpus in a message nested as GenAI, the AI SDK and OpenInference send it', () => {
    for (const [rule, text, secret] of FOUND) {
      const genai = JSON.stringify({ 'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `please use ${text}` }] }]), 'gen_ai.output.messages': '[]' });
      const aiSdk = JSON.stringify({ 'ai.prompt': JSON.stringify({ system: 'be brief', messages: [{ role: 'user', content: JSON.stringify({ note: text }) }] }) });
      const flat = JSON.stringify({ 'llm.input_messages.0.message.content': `please use ${text}` });
      for (const m of [genai, aiSdk, flat]) {
        const out = redactor.text(m);
        expect(out, `${rule} in ${m.slice(0, 60)}`).not.toContain(secret);
        expect(out).toContain('[redacted:');
        // Still the same JSON shape, each level parseable.
        expect(Object.keys(JSON.parse(out) as object)).toEqual(Object.keys(JSON.parse(m) as object));
      }
    }
  });

  it('finds a value by its secret name inside a message (the corpus\'s shapes), as in a call\'s args', () => {
    for (const [what, args, secrets] of SHAPES) {
      const m = JSON.stringify({ 'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'tool_call', name: 'login', arguments: args }] }]) });
      const out = redactor.text(m);
      for (const s of secrets) expect(out, what).not.toContain(s);
    }
  });

  it('keeps messages without a secret as sent, and reads text that is not JSON as text', () => {
    const clean = '{"gen_ai.input.messages":"[{\\"role\\":\\"user\\",\\"parts\\":[{\\"type\\":\\"text\\",\\"content\\":\\"weather in Oslo, 1.0 days\\"}]}]"}';
    expect(redactor.text(clean)).toBe(clean);
    const [, text, secret] = FOUND[0] as readonly [string, string, string];
    expect(redactor.text(`not json: ${text}`)).not.toContain(secret);
  });
});
